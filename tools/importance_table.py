#!/usr/bin/python3
"""VALIDATION.md's importance-sampling table: the probability that a run loses
any record, by plain Monte Carlo and by importance sampling on the same seeds,
next to the closed form for the fault that causes it.

The scenario is configs/scenarios/rare_loss.json (1 record/s into one
partition, the application dropping what its producer fails to send) with
10-minute runs and leader changes at 1.44 a day, each leaving the partition
without a leader for 150 s, past delivery.timeout.ms (120 s): a run loses
records exactly when such a change comes, P = 1 - e^{-1.44/144} = 0.00995
(a change near the end still expires its records in the drain). Importance
sampling draws the changes 100x as often and weights each seed by its
likelihood ratio.

usage: tools/importance_table.py PIPESIM [--first-rows]
--first-rows computes only the first row of each method: the table's spot check in CI
(tools/validation_doc.py --spot).
"""
import json
import math
import subprocess
import sys

SCENARIO = ["configs/scenarios/rare_loss.json", "--set", "run.duration=10m", "--set",
            'faults=[{"kind":"leader_change","rate_per_day":1.44,"duration":"150s","partitions":"all"}]']


def run(pipesim, seeds, tilt):
    command = [pipesim, "run"] + SCENARIO + ["--seeds", str(seeds), "--format", "json"]
    if tilt:
        command += ["--importance", tilt]
    out = json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)
    return out["estimates"]["lost_records_probability"], out.get("importance")


def main():
    pipesim = sys.argv[1]
    first_rows = "--first-rows" in sys.argv[2:]
    truth = 1 - math.exp(-1.44 / 144)
    print("| method | runs (seeds 1..N) | P(a 10-minute run loses records), 95% CI | CI width | "
          "holds the closed form | effective sample size |")
    print("|---|---:|---|---:|---|---:|")
    for tilt, counts in (("", (2000, 8000, 32000)), ("leader_change=100", (2000, 8000))):
        for seeds in counts[:1] if first_rows else counts:
            p, importance = run(pipesim, seeds, tilt)
            method = f"importance sampling, `--importance {tilt}`" if tilt else "plain Monte Carlo"
            ess = f"{importance['effective_sample_size']:,.0f}" if importance else f"{seeds:,}"
            lo, hi = p["ci95"]
            print(f"| {method} | {seeds:,} | {p['value']:.5f} [{lo:.5f}, {hi:.5f}] | {hi - lo:.5f} | "
                  f"{'yes' if lo <= truth <= hi else 'no'} | {ess} |")
    print(f"| closed form: P(a leader change within 10 min) = 1 - e^(-1.44/144) | | {truth:.5f} | | | |")


if __name__ == "__main__":
    main()
