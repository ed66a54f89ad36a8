#!/usr/bin/python3
"""VALIDATION.md's "Keeper latency and in-flight under load" table: pipesim's
figures for a caught-up sink with one replica's cleanup thread against a
calculation of the same load done here, independently of pipesim's code.

The load (configs/lab/keeper_cleanup_burst_in_flight.json run for an hour):
Keeper's production background, 1,728 threads each away D = 0.172767 s
between requests (tools/keeper_mva.py), a constant service time of 25 us
(40,000/s); a read's round trip 0.3 ms after its node's writes before it have
committed (one server, so its node takes every write: a third of the
background's and of the stream's requests), a write's 0.3 + 1.4 ms (Raft's
commit); this pipeline's inserts (2 requests each)
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
import math
import subprocess
import sys
from collections import deque

from keeper_mva import mva  # exact mean value analysis of the closed loop (tools/keeper_mva.py)

N = 1728
MU = 40000.0
READ_TRIP = 0.0003
COMMIT = 0.0014
WRITE_SHARE = 1 / 3
AWAY = 0.172767
SLEEP = 30.0  # cleanup_delay_period: the thread sleeps this long after an iteration
TRAFFIC_S = 3600.0
DRAIN_S = 60.0
STEP = 2e-5
SUB_READ_S = 1 / 774000.0  # a MultiRead's sub-read (KeeperStorage's get, ClickHouse PR #103081)
PARTS_PER_INSERT = 1.3  # outdated parts an inserted part makes (its merges)


def read_wait_quantile(p, writes_per_s):
    """A read's wait for its node's last write to commit, at quantile p: the
    last write came A ago, exponential at the node's write rate, and commits
    COMMIT after it came, so P(wait <= w) = e^(-rate (COMMIT - w))."""
    floor = math.exp(-writes_per_s * COMMIT)
    return 0.0 if p <= floor else COMMIT + math.log(p) / writes_per_s


def read_wait_mean(writes_per_s):
    return COMMIT - (1 - math.exp(-writes_per_s * COMMIT)) / writes_per_s


def away_for(throughput):
    lo, hi = 1e-6, 10.0
    for _ in range(60):
        mid = (lo * hi) ** 0.5
        if mva(N, mid, MU)[0] > throughput:
            lo = mid
        else:
            hi = mid
    return (lo * hi) ** 0.5


def iteration(k, away, lat, read_trip):
    """One cleanup iteration, from its first read's sending until the queue is
    calm again (the fluid's calm: nothing queued). Its stages, each sent when
    the previous one's last answer arrives: a MultiRead of the P = 1.3 k
    outdated parts' znodes, their P removes, a MultiRead of the k new block
    ids, their k removes.

    Returns (the request-seconds in flight above calm, its length, the most
    in flight above calm, [(latency s, requests)] of every request it served,
    how many of those were the threads')."""
    calm = N * lat / away  # the fluid's calm: nothing queued, the round trips (lat: the threads' mean)
    parts = PARTS_PER_INSERT * k
    # (requests in flight, the leader's seconds for them, the round trip): a
    # MultiRead is one read whose sub-reads take SUB_READ_S each; a burst is
    # one remove (a write) each.
    write_trip = READ_TRIP + COMMIT
    stages = [(1.0, parts * SUB_READ_S, read_trip), (parts, parts / MU, write_trip),
              (1.0, k * SUB_READ_S, read_trip), (k, k / MU, write_trip)]
    # Queue entries: [kind, leader seconds left, time sent, stage index]
    queue = deque()
    served = []
    arriving = {}  # step index -> the stages' answers that reach the client in it
    back = 0.0  # the stages' answers received so far
    sent = 0.0
    stage = 0
    next_send = 0.0
    excess = peak = threads_served = 0.0
    t = 0.0
    i = 0
    while True:
        if stage < len(stages) and next_send is not None and t >= next_send - 1e-12:
            requests, work, _ = stages[stage]
            queue.append(["stage", work, t, stage])
            sent += requests
            stage += 1
            next_send = None
        f = sum(e[1] for e in queue if e[0] == "threads") * MU
        back += arriving.pop(i, 0.0)
        in_flight = f + (N - f) * lat / away + (sent - back)
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
                served.append((t + STEP - head[2], part * MU, None))  # their round trips: main()
                threads_served += part * MU
            else:
                requests, total, trip = stages[head[3]]
                at = i + round(trip / STEP)
                if requests > 1:  # a burst: its requests are answered as they are served
                    served.append((t + STEP - head[2] + trip, part * MU, trip))
                    arriving[at] = arriving.get(at, 0.0) + part * MU
            if head[1] <= 1e-15:
                if head[0] == "stage":
                    trip = stages[head[3]][2]
                    if stages[head[3]][0] == 1.0:  # the MultiRead is answered whole
                        served.append((t + STEP - head[2] + trip, 1.0, trip))
                        at = i + round(trip / STEP)
                        arriving[at] = arriving.get(at, 0.0) + 1.0
                    next_send = t + STEP + trip
                queue.popleft()
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
    # Calm: the threads carry the background and the stream; a third of what
    # they send is writes, all at the one server's node.
    away = away_for(10000.0 + stream)
    x, q, rr = mva(N, away, MU)
    node_writes = x * WRITE_SHARE
    read_trip = READ_TRIP + read_wait_mean(node_writes)
    lat = WRITE_SHARE * (READ_TRIP + COMMIT) + (1 - WRITE_SHARE) * read_trip
    calm_in_flight = q + x * lat
    calm_latency = rr + lat
    # An iteration covers its sleep and its own length: k = r x period.
    length = 0.0
    for _ in range(4):
        k = r * (SLEEP + length)
        excess, length, peak, served, threads_served = iteration(k, away, lat, read_trip)
    period = SLEEP + length
    total_s = TRAFFIC_S + DRAIN_S
    iterations = total_s / period
    # The stream stops with the traffic; the drain's minute is the background's.
    x0, q0, _ = mva(N, AWAY, MU)
    lat0 = WRITE_SHARE * (READ_TRIP + COMMIT) + (1 - WRITE_SHARE) * (READ_TRIP + read_wait_mean(x0 * WRITE_SHARE))
    mean_in_flight = ((q + x * lat) * TRAFFIC_S + (q0 + x0 * lat0) * DRAIN_S + excess * iterations) / total_s

    # Latencies: every calm request at the calm queue, plus each iteration's;
    # a thread's request is a write (a third) or a read, whose wait is drawn
    # from its distribution (50 quantiles).
    def trips(queued, n):
        out = [(queued + READ_TRIP + COMMIT, n * WRITE_SHARE)]
        reads = n * (1 - WRITE_SHARE) / 50
        out += [(queued + READ_TRIP + read_wait_quantile((j + 0.5) / 50, node_writes), reads) for j in range(50)]
        return out

    samples = trips(rr, x * total_s - threads_served * iterations)
    for v, n, trip in served:
        samples += trips(v, n * iterations) if trip is None else [(v, n * iterations)]
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
          f"outdated parts and {k:,.0f} block ids; calm: {calm_in_flight:.2f} in flight, {calm_latency * 1000:.3f} ms a "
          f"request on average (a read waits {read_wait_mean(node_writes) * 1000:.3f} ms for its node's writes).")
    print()
    print("| figure | closed loop + bursts, calculated | pipesim |")
    print("|---|---|---|")
    for what, calc, sim, digits in rows:
        print(f"| {what} | {calc:,.{digits}f} | {sim:,.{digits}f} |")


if __name__ == "__main__":
    main()
