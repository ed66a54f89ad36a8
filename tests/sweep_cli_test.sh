#!/usr/bin/env bash
# End-to-end checks of `pipesim sweep` and `pipesim merge`: bad grids and
# directories (exit 2), points agree with `pipesim run`, byte-identical files
# for any thread count, a real kill -9 mid-sweep then --resume gives the files
# of an uninterrupted run, shards joined by merge give the files of one
# machine, and the Slurm example script (driven without Slurm).
#
# Run by ctest as: PIPESIM=<binary> PIPESIM_SOURCE_DIR=<repo root> bash tests/sweep_cli_test.sh
set -u

PIPESIM=${PIPESIM:?set PIPESIM to the pipesim binary}
SRC=${PIPESIM_SOURCE_DIR:?set PIPESIM_SOURCE_DIR to the repository root}
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3

TMP=$(mktemp -d "${TMPDIR:-/tmp}/pipesim_sweep_test.XXXXXX")
BG=""
trap '[ -n "$BG" ] && kill -9 "$BG" 2>/dev/null; rm -rf "$TMP"' EXIT

# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"

# A small, fast sweep: 2 x 3 = 6 points, 15 min simulated at 20 M records/day (every put is an
# event: a short run keeps the sanitizer build within the test's time).
cat >"$TMP/grid.json" <<'JSON'
{"connect.offset.flush.interval.ms": [10000, 60000], "connect.max.poll.records": [200, 500, 1000]}
JSON
FAST=(--set run.duration=15m --set run.drain=5m --set workload.records_per_day=20000000)

# ---------------------------------------------------------------------------------------------
# Outputs and their agreement with `pipesim run`

run "$PIPESIM" sweep --grid "$TMP/grid.json" "${FAST[@]}" --seeds 3 --threads 2 --out "$TMP/a"
expect_ok "sweep: exit 0"
if [ ! -s "$OUT" ] && [ "$(ls "$TMP/a" | tr '\n' ' ')" == "points.jsonl summary.csv sweep.json " ]; then
  pass "sweep: nothing on stdout; sweep.json, points.jsonl, summary.csv in --out"
else
  fail "sweep: files" "$(ls "$TMP/a")" "$(show)"
fi
if grep -q $'\r' "$ERR"; then fail "sweep: no progress line when stderr is not a terminal" "$(show)"; else
  pass "sweep: no progress line when stderr is not a terminal"; fi

# Point 4 is flush 60000 (4 / 3 = 1) with max.poll.records 500 (4 % 3 = 1): its statistics
# must be those `pipesim run` prints for that config and the same seeds.
"$PIPESIM" run "${FAST[@]}" --set connect.offset.flush.interval.ms=60000 --set connect.max.poll.records=500 \
  --seeds 3 --format json >"$TMP/run4.json" 2>/dev/null
if "$PY" - "$TMP/a/points.jsonl" "$TMP/run4.json" <<'PYEOF'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
run = json.load(open(sys.argv[2]))
p = lines[4]
assert [l["point"] for l in lines] == [0, 1, 2, 3, 4, 5]
assert p["params"] == {"connect.offset.flush.interval.ms": 60000, "connect.max.poll.records": 500}, p["params"]
assert p["config_digest"] == run["config_digest"]
assert p["seeds"] == {"first": 1, "count": 3}
assert p["metrics"] == run["metrics"]
PYEOF
then pass "sweep: point 4 equals pipesim run of its config (params, digest, every statistic)"
else fail "sweep: point 4 equals pipesim run of its config"; fi

# The CSV: pandas-ready, one row per point, swept keys as columns, statistics as <metric>_<stat>.
if "$PY" - "$TMP/a/summary.csv" "$TMP/a/points.jsonl" <<'PYEOF'
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
lines = [json.loads(l) for l in open(sys.argv[2])]
assert len(rows) == 6
head = list(rows[0].keys())
assert head[:4] == ["point", "connect.offset.flush.interval.ms", "connect.max.poll.records", "config_digest"], head[:4]
for r, l in zip(rows, lines):
    assert int(r["point"]) == l["point"]
    assert int(r["connect.max.poll.records"]) == l["params"]["connect.max.poll.records"]
    m = l["metrics"]
    # CSV numbers read back as the very same doubles as the JSON line's.
    assert float(r["duplicate_rows_mean"]) == m["duplicate_rows"]["mean"]
    assert float(r["keeper_peak_in_flight_ci95_lo"]) == m["keeper_peak_in_flight"]["ci95"][0]
    assert float(r["duplicate_rows_by_entry.task_restart_replay_p99"]) == m["duplicate_rows_by_entry"]["task_restart_replay"]["p99"]
PYEOF
then pass "sweep: summary.csv rows match points.jsonl (same doubles, <metric>_<stat> columns)"
else fail "sweep: summary.csv rows match points.jsonl"; fi

run "$PIPESIM" sweep --grid "$TMP/grid.json" "${FAST[@]}" --seeds 3 --threads 1 --out "$TMP/a1"
same_files "sweep: --threads 1 and --threads 2 write identical files" "$TMP/a" "$TMP/a1"

# The same grid as a "sweep" section of the config: the same sweep, byte for byte.
"$PY" -c 'import json,sys; print(json.dumps({"sweep": json.load(open(sys.argv[1]))}))' "$TMP/grid.json" >"$TMP/with_sweep.json"
run "$PIPESIM" sweep "$TMP/with_sweep.json" "${FAST[@]}" --seeds 3 --out "$TMP/a2"
same_files "sweep: a \"sweep\" section in the config is the same sweep as --grid" "$TMP/a" "$TMP/a2"
# Other commands run the base config and ignore the section: validate gives its digest.
run "$PIPESIM" validate "$TMP/with_sweep.json" "${FAST[@]}"
base_digest=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["base_config_digest"])' "$TMP/a/sweep.json")
if [ "$RC" -eq 0 ] && grep -qF "config OK (digest $base_digest)" "$OUT"; then
  pass "validate of a config with a sweep section: valid, the sweep's base config digest"
else fail "validate of a config with a sweep section" "want digest $base_digest" "$(show)"; fi

run "$PIPESIM" sweep --grid "$TMP/grid.json" "${FAST[@]}" --seeds 2 --per-seed --out "$TMP/ps"
if "$PY" - "$TMP/ps/seeds.jsonl" <<'PYEOF'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
assert [(l["point"], l["seed"]) for l in lines] == [(p, s) for p in range(6) for s in (1, 2)]
assert isinstance(lines[0]["metrics"]["duplicate_rows"], (int, float))
PYEOF
then pass "sweep --per-seed: seeds.jsonl has one line per point and seed, in order"
else fail "sweep --per-seed: seeds.jsonl"; fi

run "$PIPESIM" sweep --grid "$TMP/grid.json" --seeds 2 --dry-run
if [ "$RC" -eq 0 ] && [ "$(wc -l <"$OUT")" -eq 6 ] && grep -q "6 of 6 points x 2 seeds = 12 runs" "$ERR"; then
  pass "sweep --dry-run: one line per point, nothing run"
else fail "sweep --dry-run" "$(show)"; fi

# ---------------------------------------------------------------------------------------------
# Bad input

run "$PIPESIM" sweep "${FAST[@]}" --out "$TMP/x"
expect_bad "sweep without a grid" "no grid: give --grid GRID.json or a \"sweep\" section"
echo '{"connect.max.pol.records": [200]}' >"$TMP/bad1.json"
run "$PIPESIM" sweep --grid "$TMP/bad1.json" --out "$TMP/x"
expect_bad "sweep: unknown key in the grid" \
  "sweep point 0 (connect.max.pol.records=200): config error at connect.max.pol.records: unknown key; did you mean \"max.poll.records\"?"
echo '{"connect.max.poll.records": [200, 0]}' >"$TMP/bad2.json"
run "$PIPESIM" sweep --grid "$TMP/bad2.json" --out "$TMP/x"
expect_bad "sweep: a bad value at one point" \
  "sweep point 1 (connect.max.poll.records=0): config error at connect.max.poll.records: expected an integer from 1 to 2147483647, found 0"
echo '{"connect.max.poll.records": 200}' >"$TMP/bad3.json"
run "$PIPESIM" sweep --grid "$TMP/bad3.json" --out "$TMP/x"
expect_bad "sweep: a value instead of a list" "[\"connect.max.poll.records\"]: expected a non-empty list of values, found 200"
echo '{"run.seeds": [1, 2]}' >"$TMP/bad4.json"
run "$PIPESIM" sweep --grid "$TMP/bad4.json" --out "$TMP/x"
expect_bad "sweep: seeds in the grid" "every point runs the same seeds"
echo '{"connect.max.poll.records": [200,' >"$TMP/bad5.json"
run "$PIPESIM" sweep --grid "$TMP/bad5.json" --out "$TMP/x"
expect_bad "sweep: malformed grid JSON" "$TMP/bad5.json: malformed JSON at line"
run "$PIPESIM" sweep --grid "$TMP/grid.json" --shard 3/2 --out "$TMP/x"
expect_bad "sweep: bad --shard" "bad --shard \"3/2\": expected K/N with 1 <= K <= N"
run "$PIPESIM" sweep --grid "$TMP/grid.json"
expect_bad "sweep without --out" "sweep needs --out DIR"
run "$PIPESIM" sweep --grid "$TMP/grid.json" "${FAST[@]}" --seeds 3 --out "$TMP/a"
expect_bad "sweep into a directory that holds a sweep" "already holds a sweep (sweep.json): pass --resume"
run "$PIPESIM" sweep --grid "$TMP/grid.json" "${FAST[@]}" --seeds 4 --out "$TMP/a" --resume
expect_bad "sweep --resume of another sweep" "holds a different sweep (its sweep.json differs in \"seeds\")"
run "$PIPESIM" sweep "$TMP/a/sweep.json" --out "$TMP/x"
expect_bad "sweep of a sweep's manifest" "$TMP/a/sweep.json is a sweep's manifest (pipesim sweep --out DIR writes DIR/sweep.json), not a config"
if [ ! -e "$TMP/x" ]; then pass "bad sweeps create no output directory"; else fail "bad sweeps create no output directory"; fi

# ---------------------------------------------------------------------------------------------
# kill -9 in the middle of a real sweep, then --resume

# 16 points x 3 seeds of 30 min at 100 M records/day: a few seconds of work in Release, long enough to be
# killed in the middle.
cat >"$TMP/long.json" <<'JSON'
{"connect.offset.flush.interval.ms": [5000, 20000, 60000, 120000], "connect.max.poll.records": [200, 500, 1000, 2000]}
JSON
LONG=(--grid "$TMP/long.json" --set run.duration=30m --set workload.records_per_day=100000000 --seeds 3 --per-seed)
"$PIPESIM" sweep "${LONG[@]}" --threads 2 --out "$TMP/killed" 2>/dev/null &
BG=$!
for _ in $(seq 1 1200); do
  [ -f "$TMP/killed/points.jsonl" ] && [ "$(wc -l <"$TMP/killed/points.jsonl")" -ge 2 ] && break
  sleep 0.05
done
kill -9 "$BG" 2>/dev/null
wait "$BG" 2>/dev/null
BG=""
lines=$(wc -l <"$TMP/killed/points.jsonl")
if [ "$lines" -ge 2 ] && [ "$lines" -lt 16 ] && [ ! -e "$TMP/killed/summary.csv" ]; then
  pass "kill -9 mid-sweep: $lines of 16 points written, no summary.csv yet"
else
  fail "kill -9 mid-sweep: the sweep was not killed in the middle ($lines of 16 points)"
fi
# Also a write cut short: half a line at the end of each file.
head -c 100 "$TMP/killed/points.jsonl" >>"$TMP/killed/points.jsonl"
head -c 50 "$TMP/killed/seeds.jsonl" >>"$TMP/killed/seeds.jsonl"
run "$PIPESIM" sweep "${LONG[@]}" --threads 2 --out "$TMP/killed" --resume
if [ "$RC" -eq 0 ] && grep -q "resuming $TMP/killed: $lines of 16 points were finished (an unfinished write was cut off)" "$ERR"; then
  pass "sweep --resume after kill -9: exit 0, continues after the finished points"
else
  fail "sweep --resume after kill -9" "$(show)"
fi
run "$PIPESIM" sweep "${LONG[@]}" --threads 1 --out "$TMP/whole"
same_files "sweep --resume after kill -9: files identical to an uninterrupted run" "$TMP/killed" "$TMP/whole"
run "$PIPESIM" sweep "${LONG[@]}" --out "$TMP/whole" --resume
if [ "$RC" -eq 0 ] && grep -q "(0 points run now" "$ERR"; then pass "sweep --resume of a finished sweep runs nothing"
else fail "sweep --resume of a finished sweep runs nothing" "$(show)"; fi
same_files "sweep --resume of a finished sweep changes nothing" "$TMP/killed" "$TMP/whole"

# ---------------------------------------------------------------------------------------------
# Shards and merge

for k in 1 2 3; do
  run "$PIPESIM" sweep --grid "$TMP/grid.json" "${FAST[@]}" --seeds 3 --shard "$k/3" --out "$TMP/shard$k"
done
# 6 points in 3 shards: shard 2 holds points 1 and 4.
if [ "$("$PY" -c 'import json,sys; print([json.loads(l)["point"] for l in open(sys.argv[1])])' "$TMP/shard2/points.jsonl")" == "[1, 4]" ]; then
  pass "sweep --shard 2/3 runs points 1 and 4"
else fail "sweep --shard 2/3 runs points 1 and 4" "$(cat "$TMP/shard2/points.jsonl" | head -c 300)"; fi
run "$PIPESIM" merge "$TMP/shard3" "$TMP/shard1" "$TMP/shard2" --out "$TMP/merged"
expect_ok "merge: exit 0"
same_files "merge of 3 shards: files identical to the one-machine sweep" "$TMP/merged" "$TMP/a"
run "$PIPESIM" merge "$TMP/shard1" "$TMP/shard3" --out "$TMP/m2"
expect_bad "merge with a shard missing" "shard 2/3 is missing"
run "$PIPESIM" merge "$TMP/shard1" "$TMP/shard1" "$TMP/shard2" --out "$TMP/m2"
expect_bad "merge with a shard twice" "shard 1/3 is given twice"
run "$PIPESIM" sweep --grid "$TMP/grid.json" "${FAST[@]}" --seeds 2 --shard 3/3 --out "$TMP/other3"
run "$PIPESIM" merge "$TMP/shard1" "$TMP/shard2" "$TMP/other3" --out "$TMP/m2"
expect_bad "merge of shards of different sweeps" "is a shard of a different sweep than $TMP/shard1 (sweep.json differs in \"seeds\")"
head -n 1 "$TMP/shard1/points.jsonl" >"$TMP/p1" && mv "$TMP/p1" "$TMP/shard1/points.jsonl"
run "$PIPESIM" merge "$TMP/shard1" "$TMP/shard2" "$TMP/shard3" --out "$TMP/m2"
expect_bad "merge of an unfinished shard" "shard 1/3 in $TMP/shard1 is unfinished: 1 of 2 points"
# It finishes with --resume, and then merges.
run "$PIPESIM" sweep --grid "$TMP/grid.json" "${FAST[@]}" --seeds 3 --shard 1/3 --out "$TMP/shard1" --resume
run "$PIPESIM" merge "$TMP/shard1" "$TMP/shard2" "$TMP/shard3" --out "$TMP/m3"
same_files "merge after finishing a shard with --resume" "$TMP/m3" "$TMP/a"

# ---------------------------------------------------------------------------------------------
# The Slurm example, driven without Slurm: the array tasks by hand, then the merge job.

SLURM=$SRC/tools/slurm_sweep.sh
for k in 1 2 3 4; do
  SLURM_ARRAY_TASK_ID=$k SLURM_ARRAY_TASK_COUNT=4 PIPESIM=$PIPESIM \
    bash "$SLURM" shard "$TMP/slurm" --grid "$TMP/grid.json" "${FAST[@]}" --seeds 3 >/dev/null 2>&1
done
PIPESIM=$PIPESIM bash "$SLURM" merge "$TMP/slurm" >/dev/null 2>&1
same_files "slurm_sweep.sh: 4 array tasks + merge give the one-machine sweep" "$TMP/slurm/merged" "$TMP/a"
# submit: a fake sbatch records what would be submitted.
mkdir -p "$TMP/bin"
cat >"$TMP/bin/sbatch" <<'SH'
#!/usr/bin/env bash
echo "sbatch $*" >>"$SBATCH_LOG"
echo "$((4000 + $(wc -l <"$SBATCH_LOG")));cluster"
SH
chmod +x "$TMP/bin/sbatch"
SBATCH_LOG=$TMP/sbatch.log PATH=$TMP/bin:$PATH bash "$SLURM" submit "$TMP/sub" 8 configs/x.json --seeds 50 >"$OUT" 2>"$ERR"
first=$(sed -n 1p "$TMP/sbatch.log")
second=$(sed -n 2p "$TMP/sbatch.log")
if [[ "$first" == "sbatch --parsable --array=1-8 --export=ALL $SLURM shard $TMP/sub configs/x.json --seeds 50" ]] &&
   [[ "$second" == "sbatch --parsable --dependency=afterok:4001 "*" $SLURM merge $TMP/sub" ]]; then
  pass "slurm_sweep.sh submit: an array of 8 shard tasks, then a merge job after it"
else
  fail "slurm_sweep.sh submit" "$first" "$second" "$(cat "$ERR")"
fi

finish
