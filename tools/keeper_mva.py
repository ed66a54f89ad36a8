#!/usr/bin/python3
"""VALIDATION.md's "Keeper under load" table: exact mean value analysis of
Keeper's closed loop (N threads away D each, one FCFS server of rate mu),
computed here independently of pipesim's product-form code
(models/keeper/closed_loop.cpp); tests/keeper_test.cpp asserts that pipesim's
figures equal these (ClosedLoop.AgreesWithMeanValueAnalysisUnderLoad).

Usage: /usr/bin/python3 tools/keeper_mva.py
"""

ROWS = [
    # (what, threads, away s, capacity/s, round trip s)
    ("production baseline (background only)", 1728, 0.172767, 40000, 0.001),
    ("keeper_backlog capacity_factor 0.25", 1728, 0.172767, 10000, 0.001),
    ("keeper_backlog capacity_factor 0.05", 1728, 0.172767, 2000, 0.001),
    ("keeper_backlog capacity_factor 0.003", 1728, 0.172767, 120, 0.001),
    ("lab keeper_backlog_insert_timeout, backlog", 1000, 1.998004, 50, 0.0001),
]


def mva(n, d, mu):
    q = 0.0
    x = r = 0.0
    for k in range(1, n + 1):
        r = (1 + q) / mu
        x = k / (d + r)
        q = x * r
    return x, q, r


def main():
    print("| regime | threads N | away D | capacity mu | throughput X | at the leader E[n] "
          "| time at the leader R | in flight (E[n] + X x round trip) |")
    print("|---|---|---|---|---|---|---|---|")
    for what, n, d, mu, rt in ROWS:
        x, q, r = mva(n, d, mu)
        print(f"| {what} | {n:,} | {d:.6f} s | {mu:,}/s | {x:,.1f}/s | {q:,.2f} | "
              f"{r * 1000:,.3f} ms | {q + x * rt:,.2f} |")


if __name__ == "__main__":
    main()
