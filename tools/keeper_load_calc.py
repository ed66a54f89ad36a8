#!/usr/bin/python3
"""VALIDATION.md's "Keeper latency and in-flight under load" table: pipesim's
figures for a caught-up sink with one replica's cleanup thread against a
calculation of the same load done here, independently of pipesim's code.

The load (configs/lab/keeper_cleanup_burst_in_flight.json run for an hour):
Keeper's production background, 1,728 threads each away D = 0.172767 s
between requests (tools/keeper_mva.py), a constant service time of 25 us
(40,000/s) and a 1 ms round trip; this pipeline's inserts (2 requests each)
and merges as a steady stream; and every ~30 s the cleanup thread's two
bursts: a read of every block id inserted since its last iteration, sent at
once, and when the last read is answered a remove of as many, sent at once.

The calculation:
- calm: exact mean value analysis (MVA) of the threads, their away time
  shortened so that they also carry this pipeline's steady stream;
- one cleanup iteration: a first-come-first-served fluid queue stepped
  every 5 us, in which the threads come back at (N - F) / D (F: theirs
  queued or in service), each burst joins the queue whole, and the leader
  serves 40,000 a second from the head; it gives every request's time in
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
    """One cleanup iteration, from its reads' sending until the queue is calm
    again (the fluid's calm: nothing queued).

    Returns (the request-seconds in flight above calm, its length, the most
    in flight above calm, [(latency s, requests)] of every request it served,
    how many of those were the threads')."""
    lat_steps = round(LAT / STEP)
    calm = N * LAT / away  # the fluid's calm: nothing queued, the round trips
    queue = deque([["reads", float(k), 0.0]])
    served = []
    bursts_done = []  # the bursts' requests served by the end of each step
    done_so_far = 0.0
    sent = float(k)
    removes_at = None
    excess = peak = threads_served = 0.0
    t = 0.0
    i = 0
    while True:
        if removes_at is not None and sent <= k and t >= removes_at - 1e-12:
            # The last read is answered: the removes go out, all at once.
            queue.append(["removes", float(k), t])
            sent += k
        f = sum(e[1] for e in queue if e[0] == "threads")
        answered = bursts_done[i - lat_steps] if i >= lat_steps else 0.0
        in_flight = f + (N - f) * LAT / away + (sent - answered)
        excess += (in_flight - calm) * STEP
        peak = max(peak, in_flight - calm)
        if sent > k and sent - answered <= 1e-6 and f <= 1e-6:
            return excess, t, peak, served, threads_served
        # The threads away come back at (N - F) / D.
        arrivals = (N - f) / away * STEP
        if queue and queue[-1][0] == "threads" and t - queue[-1][2] < 1e-4:
            queue[-1][1] += arrivals
        else:
            queue.append(["threads", arrivals, t])
        # The leader serves MU x STEP from the head; each is answered a round trip later.
        work = MU * STEP
        while work > 1e-12 and queue:
            head = queue[0]
            part = min(work, head[1])
            head[1] -= part
            work -= part
            served.append((t + STEP - head[2] + LAT, part))
            if head[0] == "threads":
                threads_served += part
            else:
                done_so_far += part
            if head[0] == "reads" and head[1] <= 1e-9:
                removes_at = t + STEP + LAT
            if head[1] <= 1e-9:
                queue.popleft()
        bursts_done.append(done_so_far)
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
    print(f"Insert rate {r:,.1f}/s; a cleanup iteration every {period:.2f} s reads and removes {k:,.0f} "
          f"block ids; calm: {calm_in_flight:.2f} in flight, {calm_latency * 1000:.3f} ms a request.")
    print()
    print("| figure | closed loop + bursts, calculated | pipesim |")
    print("|---|---|---|")
    for what, calc, sim, digits in rows:
        print(f"| {what} | {calc:,.{digits}f} | {sim:,.{digits}f} |")


if __name__ == "__main__":
    main()
