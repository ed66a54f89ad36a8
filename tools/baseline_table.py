#!/usr/bin/python3
"""VALIDATION.md's "production baseline's answers" table: the three questions
of docs/model.md §8 asked of the default config (the production baseline), 40
seeds each, with the numbers read from `pipesim run --per-seed --format json`.
Shares of crashes come with a 95% Wilson interval over the pooled crashes; rates
per day and per crash with the interval pipesim's estimates give.

usage: tools/baseline_table.py PIPESIM [--seeds 40] [--questions K,...]
--questions asks only those questions (0-based): the table's spot check in CI
(tools/validation_doc.py --spot).
"""
import argparse
import json
import subprocess

from wilson import wilson as wilson_interval  # tools/wilson.py

QUESTIONS = [
    ("with exactlyOnce on, what share of worker crashes end in State MISMATCH?",
     ["--set", "connector.exactlyOnce=true"]),
    ("with exactlyOnce off, how many duplicate rows per worker crash?", []),
    ("with exactlyOnce on and the delete_state_row runbook, how many duplicate rows a day?",
     ["--set", "connector.exactlyOnce=true", "--set", "operator.remediation=delete_state_row"]),
]


def wilson(x, n):
    return wilson_interval(x, n, 1.95996)


def share(x, n):
    lo, hi = wilson(x, n)
    return f"{x / n if n else 0:.2f}, [{lo:.2f}, {hi:.2f}]"


def estimate(e):
    return f"{e['value']:,.0f}, 95% CI [{e['ci95'][0]:,.0f}, {e['ci95'][1]:,.0f}]"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("pipesim")
    parser.add_argument("--seeds", type=int, default=40)
    parser.add_argument("--questions", help="only these questions, 0-based, comma-separated")
    args = parser.parse_args()
    asked = [QUESTIONS[int(i)] for i in args.questions.split(",")] if args.questions else QUESTIONS
    print("| question | command | pipesim says |")
    print("|---|---|---|")
    for question, flags in asked:
        command = ["run", "--seeds", str(args.seeds)] + flags
        done = subprocess.run([args.pipesim] + command + ["--format", "json", "--per-seed"], check=True,
                              capture_output=True, text=True)
        result = json.loads(done.stdout)
        est = result["estimates"]
        total = lambda key: sum(r["metrics"][key] for r in result["runs"])  # noqa: E731
        crashes = round(total("crash_episodes"))
        shown = " ".join(["pipesim"] + command)
        if flags == QUESTIONS[0][1]:
            error, mismatch = round(total("crash_episodes_error_state")), round(total("crash_episodes_state_mismatch"))
            rebalances = round(total("rebalance_episodes"))
            rebalance_stops = round(total("rebalance_episodes_state_mismatch") +
                                    total("rebalance_episodes_error_state"))
            says = (f"**{error} of {crashes} crashes end in ERROR State ({share(error, crashes)}), "
                    f"{mismatch} of {crashes} in State MISMATCH ({share(mismatch, crashes)})**; "
                    f"{rebalance_stops} of {rebalances} graceful rebalances; tasks spend "
                    f"{est['task_downtime_s_per_day']['value']:,.0f} task-seconds per day FAILED "
                    f"(the restart_only runbook)")
        elif not flags:
            says = (f"**{estimate(est['duplicate_rows_per_crash'])} rows per crash** ({crashes} crashes); "
                    f"{estimate(est['duplicate_rows_per_day'])} duplicate rows per day")
        else:
            pending = [r["seed"] for r in result["runs"] if r["metrics"]["pending_records"] > 0]
            says = (f"**{estimate(est['duplicate_rows_per_day'])} duplicate rows per day** "
                    f"({est['duplicate_rows_per_crash']['value']:,.0f} per crash); "
                    f"{len(pending)} of {len(result['runs'])} seeds end with records pending"
                    f"{' (seed' + ('s ' if len(pending) > 1 else ' ') + ', '.join(map(str, pending)) + ')' if pending else ''}; "
                    f"{est['task_downtime_s_per_day']['value']:,.0f} task-seconds per day FAILED")
        print(f"| {question} | `{shown}` | {says} |")


if __name__ == "__main__":
    main()
