#!/usr/bin/env bash
# The Dask driver (tools/dask_sweep.py) gives exactly the files of a local
# `pipesim sweep`: on a LocalCluster of 2 workers (one shard per point), and on
# a real dask-scheduler with dask-worker processes (--scheduler, 3 shards,
# --per-seed). Needs Debian's python3-distributed (bash dev test installs it).
#
# Run by ctest as: PIPESIM=<binary> PIPESIM_SOURCE_DIR=<repo root> bash tests/dask_sweep_test.sh
set -u

PIPESIM=${PIPESIM:?set PIPESIM to the pipesim binary}
SRC=${PIPESIM_SOURCE_DIR:?set PIPESIM_SOURCE_DIR to the repository root}
PY=/usr/bin/python3
DRIVER=$SRC/tools/dask_sweep.py

TMP=$(mktemp -d "${TMPDIR:-/tmp}/pipesim_dask_test.XXXXXX")
CLUSTER_PGID=""
cleanup() {
  # The scheduler and workers were started in their own process group by this script.
  [ -n "$CLUSTER_PGID" ] && kill -TERM -- "-$CLUSTER_PGID" 2>/dev/null && sleep 1 &&
    kill -KILL -- "-$CLUSTER_PGID" 2>/dev/null
  rm -rf "$TMP"
}
trap cleanup EXIT

# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"

if ! "$PY" -c 'import distributed' 2>/dev/null; then
  fail "python3-distributed is importable by $PY (bash dev test installs it)"
  echo "$passed passed, $failed failed"
  exit 1
fi

cat >"$TMP/grid.json" <<'JSON'
{"connector.exactlyOnce": [false, true], "connect.max.poll.records": [200, 1000], "workload.records_per_day": [20000000, 40000000]}
JSON
# 8 points of 2 seeds x 10 minutes: the files, not the figures, are what this test compares.
SWEEP=(--grid "$TMP/grid.json" --seeds 2 --set run.duration=10m --set run.drain=2m)

"$PIPESIM" sweep "${SWEEP[@]}" --out "$TMP/local" 2>/dev/null
"$PY" "$DRIVER" --pipesim "$PIPESIM" --workers 2 --out "$TMP/dask" -- "${SWEEP[@]}" >"$TMP/driver.out" 2>"$TMP/driver.err"
rc=$?
if [ "$rc" -eq 0 ] && grep -q "8 points in 8 shards, 8 to run on a LocalCluster of 2 workers" "$TMP/driver.err"; then
  pass "dask_sweep.py on a LocalCluster of 2 workers: 8 shards, exit 0"
else
  fail "dask_sweep.py on a LocalCluster: exit $rc" "$(tail -n 20 "$TMP/driver.err")"
fi
same_files "dask_sweep.py (LocalCluster): merged files identical to the local sweep" "$TMP/local" "$TMP/dask" \
  "$(tail -n 20 "$TMP/driver.err" 2>/dev/null)"
if [ ! -e "$TMP/dask.shards" ]; then pass "dask_sweep.py removes the shards after the merge"
else fail "dask_sweep.py removes the shards after the merge"; fi

# A real scheduler and two worker processes, as on a cluster.
setsid bash -c '
  dask-scheduler --host 127.0.0.1 --port 0 --no-dashboard --scheduler-file "$1/scheduler.json" >"$1/scheduler.log" 2>&1 &
  for _ in $(seq 1 200); do [ -s "$1/scheduler.json" ] && break; sleep 0.1; done
  dask-worker --scheduler-file "$1/scheduler.json" --nworkers 2 --nthreads 1 --no-dashboard >"$1/worker.log" 2>&1 &
  wait' _ "$TMP" </dev/null &
CLUSTER_PGID=$!
for _ in $(seq 1 300); do [ -s "$TMP/scheduler.json" ] && break; sleep 0.1; done
ADDRESS=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["address"])' "$TMP/scheduler.json" 2>/dev/null)
"$PIPESIM" sweep "${SWEEP[@]}" --per-seed --out "$TMP/local_ps" 2>/dev/null
"$PY" "$DRIVER" --pipesim "$PIPESIM" --scheduler "$ADDRESS" --shards 3 --out "$TMP/sched" -- "${SWEEP[@]}" --per-seed \
  >"$TMP/driver.out" 2>"$TMP/driver.err"
rc=$?
if [ -n "$ADDRESS" ] && [ "$rc" -eq 0 ] && grep -q "8 points in 3 shards, 3 to run on $ADDRESS" "$TMP/driver.err"; then
  pass "dask_sweep.py --scheduler $ADDRESS --shards 3: exit 0"
else
  fail "dask_sweep.py --scheduler '$ADDRESS': exit $rc" "$(tail -n 20 "$TMP/driver.err")" "$(tail -n 5 "$TMP/scheduler.log" 2>/dev/null)"
fi
same_files "dask_sweep.py (scheduler, 3 shards, --per-seed): merged files identical to the local sweep" \
  "$TMP/local_ps" "$TMP/sched" "$(tail -n 20 "$TMP/driver.err" 2>/dev/null)"

# A shard that fails: the driver says which and exits 1, writes no result, and keeps only whole
# shards (those finished by then, if any) for --resume, which then runs the others.
cat >"$TMP/flaky" <<EOF
#!/bin/bash
for a in "\$@"; do
  if [ "\$a" = 2/3 ] && [ ! -e "$TMP/healed" ]; then echo "flaky: no" >&2; exit 3; fi
done
exec "$PIPESIM" "\$@"
EOF
chmod +x "$TMP/flaky"
"$PY" "$DRIVER" --pipesim "$TMP/flaky" --scheduler "$ADDRESS" --shards 3 --out "$TMP/flaky_out" -- "${SWEEP[@]}" --per-seed \
  >/dev/null 2>"$TMP/flaky.err"
rc=$?
kept=$(ls -A "$TMP/flaky_out.shards" 2>/dev/null | tr '\n' ' ')
if [ "$rc" -eq 1 ] && grep -q "shard 2/3 failed (exit 3)" "$TMP/flaky.err" && ! grep -q Traceback "$TMP/flaky.err" &&
   [ ! -e "$TMP/flaky_out" ] && [[ ! "$kept" =~ 2-of-3|^\. ]] &&
   { { [ -z "$kept" ] && [ ! -e "$TMP/flaky_out.shards" ]; } || grep -q "kept in $TMP/flaky_out.shards" "$TMP/flaky.err"; }; then
  pass "dask_sweep.py with a failing shard: exit 1, its message, no result, only whole shards kept (${kept:-none})"
else
  fail "dask_sweep.py with a failing shard: exit $rc, kept: $kept" "$(tail -n 20 "$TMP/flaky.err")"
fi
touch "$TMP/healed"
"$PY" "$DRIVER" --pipesim "$TMP/flaky" --scheduler "$ADDRESS" --shards 3 --resume --out "$TMP/flaky_out" -- "${SWEEP[@]}" \
  --per-seed >/dev/null 2>"$TMP/flaky.err"
rc=$?
if [ "$rc" -eq 0 ]; then pass "dask_sweep.py --resume after a failed shard: exit 0"
else fail "dask_sweep.py --resume after a failed shard: exit $rc" "$(tail -n 20 "$TMP/flaky.err")"; fi
same_files "dask_sweep.py --resume after a failed shard: merged files identical to the local sweep" \
  "$TMP/local_ps" "$TMP/flaky_out" "$(tail -n 20 "$TMP/flaky.err" 2>/dev/null)"

# A bad grid fails before anything is submitted, with pipesim's message and exit code.
echo '{"connect.max.poll.records": [0]}' >"$TMP/bad.json"
"$PY" "$DRIVER" --pipesim "$PIPESIM" --out "$TMP/bad" -- --grid "$TMP/bad.json" >/dev/null 2>"$TMP/bad.err"
rc=$?
if [ "$rc" -eq 2 ] && grep -q "sweep point 0 (connect.max.poll.records=0): config error" "$TMP/bad.err" && [ ! -e "$TMP/bad" ]; then
  pass "dask_sweep.py with a bad grid: exit 2, pipesim's message, nothing written"
else
  fail "dask_sweep.py with a bad grid: exit $rc" "$(cat "$TMP/bad.err")"
fi

finish
