#!/usr/bin/python3
"""VALIDATION.md's late-answers table: what lost answers do to an idempotent
producer while leaders flap, by what the loss does to the connection.

The scenario is configs/scenarios/late_answers_leader_flapping.json: the
production day to 20:00 with, from 19:00 for 45 minutes, every partition's
leader moved every 20 s (leader_flapping) and a share of the TCP segments
between the producer and the brokers lost (response_loss). The service parks
failed sends in a retry table and re-sends only what ClickHouse lacks, so
every duplicate comes from the producer itself. Each row is one loss mode and
probability over the scenario's 8 seeds; the counts are per run (the window),
means over the seeds.

usage: tools/late_answers_table.py PIPESIM [--first-rows]
--first-rows computes only the first row: the table's spot check in CI
(tools/validation_doc.py --spot).
"""
import json
import subprocess
import sys

SCENARIO = "configs/scenarios/late_answers_leader_flapping.json"
ROWS = [("retransmit", 0.01), ("retransmit", 0.03), ("retransmit", 0.05), ("stall", 0.01), ("stall", 0.03)]


def run(pipesim, mode, probability):
    # The scenario's own faults, with this row's loss on its response_loss window.
    with open(SCENARIO) as f:
        faults = json.load(f)["faults"]
    for fault in faults:
        if fault["kind"] == "response_loss":
            fault.update(probability=probability, connection=mode)
    command = [pipesim, "run", SCENARIO, "--set", "faults=" + json.dumps(faults, separators=(",", ":")),
               "--format", "json"]
    return json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)["metrics"]


def mean(metrics, name, path=None):
    m = metrics[name] if path is None else metrics[name][path]
    return m["mean"]


def main():
    pipesim = sys.argv[1]
    rows = ROWS[:1] if "--first-rows" in sys.argv[2:] else ROWS
    print("| connection | segments lost | duplicate rows, 95% CI | of them epoch_bump_resend | "
          "also failed to the application | epoch bumps | late failures | late answers | "
          "records expired |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|")
    for mode, probability in rows:
        m = run(pipesim, mode, probability)
        lo, hi = m["duplicate_rows"]["ci95"]
        print(f"| {mode} | {probability:.0%} | {mean(m, 'duplicate_rows'):,.1f} [{max(lo, 0):,.1f}, {hi:,.1f}] | "
              f"{mean(m, 'producer_retry_by_path', 'epoch_bump_resend'):,.1f} | "
              f"{mean(m, 'producer_duplicates_also_failed', 'epoch_bump_resend'):,.1f} | "
              f"{mean(m, 'producer_epoch_bumps'):,.1f} | {mean(m, 'producer_late_failures'):,.1f} | "
              f"{mean(m, 'producer_late_answers'):,.0f} | {mean(m, 'producer_expired_records'):,.0f} |")


if __name__ == "__main__":
    main()
