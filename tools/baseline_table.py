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
import math
import re
import subprocess

from keeper_mva import mva  # tools/keeper_mva.py
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


def reference(pipesim):
    """The defaults `pipesim validate --reference` prints, as {"section.key": "value"}."""
    text = subprocess.run([pipesim, "validate", "--reference"], check=True, capture_output=True,
                          text=True).stdout
    values, section = {}, None
    for line in text.splitlines():
        head = re.match(r"^### `(\w+)`", line)
        if head:
            section = head.group(1)
        row = re.match(r"^\| `([^`]+)` \| `?\"?([^`\"|]*)\"?`? \|", line)
        if row and section:
            values[section + "." + row.group(1)] = row.group(2)
    return values


def ms(value):
    """A duration of the reference ("15ms", "20us", "1s") in milliseconds."""
    number, unit = re.match(r"^([0-9.]+)(us|ms|s)$", value).groups()
    return float(number) * {"us": 1e-3, "ms": 1.0, "s": 1e3}[unit]


def after_share_by_hand(pipesim):
    """The share of a caught-up task's put cycle after which a crash leaves its partition's
    KeeperMap state AFTER_PROCESSING, from the model's latencies (docs: docs/reference.md "What a query
    to ClickHouse costs"), for one partition per task and the client_version V1 default.

    A put: read (F + r), BEFORE write (F + r + w: exists, then the multi), insert
    (F + local + 2w: allocateBlockNumber and the commit multi), AFTER write (F + r + w), where F
    is a query's cost besides its storage work: a new connection (TCP round trip, TLS 1.3 round
    trip, handshake work), the request's round trip, the server's overhead; r and w are a Keeper
    read's and write's mean times: the queue (exact MVA of the baseline's closed loop,
    tools/keeper_mva.py) and the round trip, a read's wait for its node's writes to commit
    (c - (1 - e^(-lambda c)) / lambda at the node's write rate lambda: the background's writes over
    the servers, ours left out), a write's commit c. A write is applied at the server whatever
    becomes of the task, so a crash after the AFTER write's multi left and before the next
    BEFORE write's left leaves AFTER_PROCESSING: f = (the AFTER multi + the next read + the
    BEFORE exists) / cycle = (2F + w + 2r) / (4F + 3r + 4w + local). local: the part writing of
    the records that arrived during one cycle, at the day's mean rate, times the lognormal
    factor's mean exp(sigma^2 / 2)."""
    ref = reference(pipesim)
    rtt = ms(ref["clickhouse.network_round_trip"])
    fixed = rtt + (rtt + ms(ref["clickhouse.tls_handshake_work"])) + rtt + ms(ref["clickhouse.query_overhead"])
    _, _, queue = mva(int(ref["keeper.background_clients"]), 0.172767, int(ref["keeper.capacity_ops_per_s"]))
    commit, share = ms(ref["keeper.commit_latency"]), float(ref["keeper.background_write_share"])
    node_writes = int(ref["keeper.background_ops_per_s"]) * share / int(ref["clickhouse.replicas"]) / 1000  # per ms
    wait = commit - (1 - math.exp(-node_writes * commit)) / node_writes
    r = queue * 1000 + ms(ref["keeper.latency"]) + wait
    w = queue * 1000 + ms(ref["keeper.latency"]) + commit
    partitions = int(ref["kafka.num.partitions"])
    rate_ms = int(ref["workload.records_per_day"]) / 86400 / partitions / 1000
    base, per_row = ms(ref["clickhouse.insert_base_latency"]), ms(ref["clickhouse.insert_latency_per_row"])
    factor = math.exp(float(ref["clickhouse.insert_latency_sigma"]) ** 2 / 2)
    cycle = 4 * fixed + 3 * r + 4 * w + base * factor
    for _ in range(50):  # rows per insert = rate x cycle: a fixed point
        cycle = 4 * fixed + 3 * r + 4 * w + (base + per_row * rate_ms * cycle) * factor
    return (2 * fixed + w + 2 * r) / cycle, partitions


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
            stopped = round(total("crash_episodes_stopped"))
            after, states = round(total("crash_states_after_processing")), round(total("crash_states"))
            f, partitions = after_share_by_hand(args.pipesim)
            says = (f"**{stopped} of {crashes} crashes stop the connector ({share(stopped, crashes)}): "
                    f"{error} in ERROR State ({share(error, crashes)}), "
                    f"{mismatch} in State MISMATCH ({share(mismatch, crashes)})**; "
                    f"the crashes left {after} of {states} partition states AFTER_PROCESSING "
                    f"({share(after, states)}), by hand from the model's latencies f = {f:.2f} of a "
                    f"put cycle, so P(State MISMATCH) = 1 - (1 - f)^{partitions} = "
                    f"{1 - (1 - f) ** partitions:.2f}; "
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
