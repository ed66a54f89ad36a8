#!/usr/bin/python3
"""VALIDATION.md's "Keeper latency and in-flight under load" table: pipesim's
figures for a caught-up sink with one replica's cleanup thread against a
calculation of the same load done here, independently of pipesim's code.

The load (configs/lab/keeper_cleanup_burst_in_flight.json run for an hour):
Keeper's production background, 1,728 threads each away D = 0.172767 s
between requests (tools/keeper_mva.py), a constant service time of 25 us
(40,000/s) and a 1 ms round trip; this pipeline's inserts (2 requests each)
and merges as a steady stream; and every ~30 s the cleanup thread's
iteration, each stage sent when the last answer of the one before arrives:
one MultiRead of the outdated parts' znodes (1.3 per part inserted since its
last iteration; sub-reads at 774,000/s), a remove of each, sent at once; one
MultiRead of the block ids inserted since, a remove of each, sent at once.

The calculation:
- calm: exact mean value analysis (MVA) of the threads, their away time
  shortened so that they also carry this pipeline's steady stream;
- one cleanup iteration: a first-come-first-served fluid queue stepped
  every 20 us, in which the threads come back at (N - F) / D (F: theirs
  queued or in service), each stage joins the queue whole, and the leader
  works from the head (40,000 requests a second, a MultiRead its sub-reads'
  time); it gives every request's time in
  Keeper and everything in flight until the queue is calm again;
- the run: calm everywhere, plus one iteration's excess every period
  (30 s of sleep after the iteration's last answer).
pipesim's only input taken here is the insert rate (its batching sets it).

Usage: /usr/bin/python3 tools/keeper_load_calc.py [PIPESIM]
"""
import json
import subprocess
import sys
from collections import deque

from keeper_mva import mva  # exact mean value analysis of the closed loop (tools/keeper_mva.py)

N = 1728
MU = 40000.0
LAT = 0.001
AWAY = 0.172767
SLEEP = 30.0  # cleanup_delay_period: the thread sleeps this long after an iteration
TRAFFIC_S = 3600.0
DRAIN_S = 60.0
STEP = 2e-5
SUB_READ_S = 1 / 774000.0  # a MultiRead's sub-read (KeeperStorage's get, ClickHouse PR #103081)
PARTS_PER_INSERT = 1.3  # outdated parts an inserted part makes (its merges)


def away_for(throughput):
    lo, hi = 1e-6, 10.0
    for _ in range(60):
        mid = (lo * hi) ** 0.5
        if mva(N, mid, MU)[0] > throughput:
            lo = mid
        else:
            hi = mid
    return (lo * hi) ** 0.5


def iteration(k, away):
    """One cleanup iteration, from its first read's sending until the queue is
    calm again (the fluid's calm: nothing queued). Its stages, each sent when
    the previous one's last answer arrives: a MultiRead of the P = 1.3 k
    outdated parts' znodes, their P removes, a MultiRead of the k new block
    ids, their k removes.

    Returns (the request-seconds in flight above calm, its length, the most
    in flight above calm, [(latency s, requests)] of every request it served,
    how many of those were the threads')."""
    lat_steps = round(LAT / STEP)
    calm = N * LAT / away  # the fluid's calm: nothing queued, the round trips
    parts = PARTS_PER_INSERT * k
    # (requests in flight, the leader's seconds for them): a MultiRead is one
    # request whose sub-reads take SUB_READ_S each; a burst is one request each.
    stages = [(1.0, parts * SUB_READ_S), (parts, parts / MU), (1.0, k * SUB_READ_S), (k, k / MU)]
    # Queue entries: [kind, leader seconds left, time sent, stage index]
    queue = deque()
    served = []
    answered_by_step = []  # the stages' requests answered by the end of each step (before the round trip)
    answered = 0.0
    sent = 0.0
    stage = 0
    next_send = 0.0
    excess = peak = threads_served = 0.0
    t = 0.0
    i = 0
    while True:
        if stage < len(stages) and next_send is not None and t >= next_send - 1e-12:
            requests, work = stages[stage]
            queue.append(["stage", work, t, stage])
            sent += requests
            stage += 1
            next_send = None
        f = sum(e[1] for e in queue if e[0] == "threads") * MU
        back = answered_by_step[i - lat_steps] if i >= lat_steps else 0.0
        in_flight = f + (N - f) * LAT / away + (sent - back)
        excess += (in_flight - calm) * STEP
        peak = max(peak, in_flight - calm)
        if stage == len(stages) and sent - back <= 1e-6 and f <= 1e-6:
            return excess, t, peak, served, threads_served
        # The threads away come back at (N - F) / D.
        arrivals = (N - f) / away * STEP
        if queue and queue[-1][0] == "threads" and t - queue[-1][2] < 1e-4:
            queue[-1][1] += arrivals / MU
        else:
            queue.append(["threads", arrivals / MU, t, -1])
        # The leader works STEP seconds from the head; each is answered a round trip later.
        work = STEP
        while work > 1e-15 and queue:
            head = queue[0]
            part = min(work, head[1])
            head[1] -= part
            work -= part
            if head[0] == "threads":
                served.append((t + STEP - head[2] + LAT, part * MU))
                threads_served += part * MU
            else:
                requests, total = stages[head[3]]
                if requests > 1:  # a burst: its requests are answered as they are served
                    served.append((t + STEP - head[2] + LAT, part * MU))
                    answered += part * MU
            if head[1] <= 1e-15:
                if head[0] == "stage":
                    if stages[head[3]][0] == 1.0:  # the MultiRead is answered whole
                        served.append((t + STEP - head[2] + LAT, 1.0))
                        answered += 1.0
                    next_send = t + STEP + LAT
                queue.popleft()
        answered_by_step.append(answered)
        t += STEP
        i += 1


def main():
    pipesim = sys.argv[1] if len(sys.argv) > 1 else "build/pipesim"
    out = subprocess.run([pipesim, "run", "configs/lab/keeper_cleanup_burst_in_flight.json", "--seeds", "1",
                          "--set", "run.duration=1h", "--format", "json"],
                         check=True, capture_output=True, text=True).stdout
    m = {k: (v["mean"] if isinstance(v, dict) and "mean" in v else v) for k, v in json.loads(out)["metrics"].items()}
    r = m["inserts"] / TRAFFIC_S
    stream = (m["keeper_ops_by_source"]["inserts"]["mean"] + m["keeper_ops_by_source"]["replication"]["mean"]) \
        / TRAFFIC_S
    # Calm: the threads carry the background and the stream.
    away = away_for(10000.0 + stream)
    x, q, rr = mva(N, away, MU)
    calm_in_flight = q + x * LAT
    calm_latency = rr + LAT
    # An iteration covers its sleep and its own length: k = r x period.
    length = 0.0
    for _ in range(4):
        k = r * (SLEEP + length)
        excess, length, peak, served, threads_served = iteration(k, away)
    period = SLEEP + length
    total_s = TRAFFIC_S + DRAIN_S
    iterations = total_s / period
    # The stream stops with the traffic; the drain's minute is the background's.
    x0, q0, _ = mva(N, AWAY, MU)
    mean_in_flight = ((q + x * LAT) * TRAFFIC_S + (q0 + x0 * LAT) * DRAIN_S + excess * iterations) / total_s
    # Latencies: every calm request at the calm time, plus each iteration's.
    samples = [(calm_latency, x * total_s - threads_served * iterations)]
    samples += [(v, n * iterations) for v, n in served]
    samples.sort()
    total = sum(n for _, n in samples)

    def quantile(p):
        acc = 0.0
        for v, n in samples:
            acc += n
            if acc >= p * total:
                return v
        return samples[-1][0]

    rows = [
        ("mean in flight", mean_in_flight, m["keeper_mean_in_flight"], 1),
        ("peak in flight", calm_in_flight + peak, m["keeper_peak_in_flight"], 0),
        ("Keeper latency p50 (ms)", quantile(0.5) * 1000, m["keeper_latency_p50_ms"], 3),
        ("Keeper latency p99 (ms)", quantile(0.99) * 1000, m["keeper_latency_p99_ms"], 1),
    ]
    print(f"Insert rate {r:,.1f}/s; a cleanup iteration every {period:.2f} s removes {PARTS_PER_INSERT * k:,.0f} "
          f"outdated parts and {k:,.0f} block ids; calm: {calm_in_flight:.2f} in flight, {calm_latency * 1000:.3f} ms a request.")
    print()
    print("| figure | closed loop + bursts, calculated | pipesim |")
    print("|---|---|---|")
    for what, calc, sim, digits in rows:
        print(f"| {what} | {calc:,.{digits}f} | {sim:,.{digits}f} |")


if __name__ == "__main__":
    main()
