#!/usr/bin/python3
"""Simulation vs the analytic model over a grid (VALIDATION.md).

Runs `pipesim run --per-seed --format json` for each grid point (one partition,
fixed arrivals, Poisson worker crashes, as tests/analytic_crosscheck_test.cpp) and compares
  (a) the share of worker crashes that stop an exactlyOnce connector
      (State MISMATCH or ERROR State) with its closed form, and
  (b) the duplicate rows per crash with exactlyOnce off,
then plots both. The closed forms are written again here, independently of
models/analytic/crash_outcome.cpp, from the derivation in its header.

usage: tools/validation_crosscheck.py PIPESIM [--out docs/img/validation_crosscheck.png] [--seeds 8]
                                      [--points I,J,...]
--points computes only those rows of the grid (0-based): the table's spot check in CI
(tools/validation_doc.py --spot).
"""
import argparse
import json
import subprocess
import sys
import tempfile

import matplotlib

from wilson import wilson as wilson_interval  # noqa: E402  (tools/wilson.py)

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

GRID = [  # (records/s, commit interval s, max.poll.records)
    (100, 5, 100), (100, 60, 500), (500, 30, 1000), (1000, 10, 2000), (1000, 60, 500),
    (2000, 600, 2000), (3000, 20, 1000), (3000, 300, 2000), (400, 600, 1000), (200, 120, 1000),
    (300, 300, 2000), (2000, 10, 1500), (100, 10, 500), (50, 10, 400),
]
FETCH_RECORDS = 1048576 // (1024 + 18)  # max.partition.fetch.bytes in records of 1 KiB + framing


def stop_share(rate, interval, b):
    # The first replayed batch holds min(B, F) records; the crash stops the
    # connector once more than that many were put since the commit.
    first = min(b, FETCH_RECORDS)
    return min(max((interval - first / rate - 0.5 / rate) / interval, 0.0), 1.0)


def duplicates_per_crash(rate, interval, b):
    # Every record put since the commit is inserted again; no replayed block
    # repeats an original one (the originals held a few records each).
    return rate * interval / 2


def crash_plan(interval, crashes):
    # Crashes far apart against the commit interval and the recovery, at
    # least an hour apart on average; a run long enough for `crashes` of them.
    gap = max(3600.0, 10.0 * (interval + 60.0))
    return 86400.0 / gap, int(crashes * gap)


def wilson(x, n):
    return wilson_interval(x, n, 2.5758)


def run(pipesim, rate, interval, b, exactly_once, seeds, crashes):
    crashes_per_day, duration_s = crash_plan(interval, crashes)
    config = {
        "workload": {"records_per_day": int(rate * 86400), "profile": "constant", "arrivals": "fixed"},
        "kafka": {"num.partitions": 1},
        "connect": {"tasks.max": 1, "offset.flush.interval.ms": int(interval * 1000), "max.poll.records": b},
        "connector": {"exactlyOnce": exactly_once, "errors.tolerance": "all"},
        "faults": [{"kind": "worker_crash", "rate_per_day": crashes_per_day}],
        "run": {"duration": f"{duration_s}s", "drain": "30m", "seeds": seeds},
    }
    # Each point's config in its own temporary file (two checks may run side by side).
    with tempfile.NamedTemporaryFile("w", suffix=".json", prefix="pipesim_validation_point.") as f:
        json.dump(config, f)
        f.flush()
        out = subprocess.run([pipesim, "run", f.name, "--format", "json", "--per-seed"], check=True,
                             capture_output=True, text=True).stdout
    runs = json.loads(out)["runs"]
    total = lambda *keys: sum(r["metrics"][keys[0]] if len(keys) == 1 else r["metrics"][keys[0]][keys[1]]
                              for r in runs)
    return runs, total


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("pipesim")
    parser.add_argument("--out", default="docs/img/validation_crosscheck.png")
    parser.add_argument("--seeds", type=int, default=8)
    parser.add_argument("--points", help="only these rows of the grid, 0-based, comma-separated")
    args = parser.parse_args()
    grid = [GRID[int(i)] for i in args.points.split(",")] if args.points else GRID

    rows = []
    for rate, interval, b in grid:
        _, total = run(args.pipesim, rate, interval, b, True, args.seeds, 12)
        crashes = total("crash_episodes")
        stops = total("crash_episodes_state_mismatch") + total("crash_episodes_error_state")
        lo, hi = wilson(stops, crashes)
        runs, total_off = run(args.pipesim, rate, interval, b, False, 12, 6)
        crashes_off = total_off("crash_episodes")
        dups = [r["metrics"]["duplicate_rows"] for r in runs]
        per_crash = sum(dups) / crashes_off if crashes_off else 0.0
        rows.append((rate, interval, b, stops / crashes if crashes else 0, lo, hi,
                     stop_share(rate, interval, b), per_crash, duplicates_per_crash(rate, interval, b)))
    print("| records/s | interval s | max.poll.records | stop share (sim, 99% CI) | analytic | "
          "dup rows/crash (sim) | analytic |")
    print("|---:|---:|---:|---|---:|---:|---:|")
    for r in rows:
        print(f"| {r[0]} | {r[1]} | {r[2]} | {r[3]:.3f} [{r[4]:.3f}, {r[5]:.3f}] | {r[6]:.3f} | "
              f"{r[7]:.0f} | {r[8]:.0f} |")

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.5))
    ax1.errorbar([r[6] for r in rows], [r[3] for r in rows],
                 yerr=[[r[3] - r[4] for r in rows], [r[5] - r[3] for r in rows]], fmt="o", capsize=3)
    ax1.plot([0, 1], [0, 1], "k--", lw=1)
    ax1.set_xlabel("analytic P(stop | worker crash)")
    ax1.set_ylabel("simulated share (99% Wilson CI)")
    ax1.set_title("(a) exactlyOnce: crashes ending in MISMATCH / ERROR")
    xs = [max(r[8], 1) for r in rows]
    ys = [max(r[7], 1) for r in rows]
    ax2.loglog(xs, ys, "o")
    lim = [1, max(xs + ys) * 2]
    ax2.plot(lim, lim, "k--", lw=1)
    ax2.set_xlabel("analytic duplicate rows per crash (0 shown as 1)")
    ax2.set_ylabel("simulated")
    ax2.set_title("(b) exactlyOnce off: duplicate rows per crash")
    fig.suptitle("pipesim vs the analytic model: 1 partition, fixed arrivals, Poisson worker crashes")
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
