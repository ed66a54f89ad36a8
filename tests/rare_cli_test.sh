#!/usr/bin/env bash
# End-to-end checks of the two commands for rare failures (docs/model.md §6):
# `pipesim shrink` (a failing seed reduced to its causal faults; its output
# reproduces) and `--importance` on run, check, compare, sweep, explain (the
# tilt and its weights reported; bad tilts refused with exit 2).
#
# Run by ctest as: PIPESIM=<binary> PIPESIM_SOURCE_DIR=<repo root> bash tests/rare_cli_test.sh
set -u

PIPESIM=${PIPESIM:?set PIPESIM to the pipesim binary}
SRC=${PIPESIM_SOURCE_DIR:?set PIPESIM_SOURCE_DIR to the repository root}
PY=/usr/bin/python3
TMP=$(mktemp -d "${TMPDIR:-/tmp}/pipesim_rare_cli_test.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"

# expect_exact NAME MESSAGE: exit 2, nothing on stdout, stderr exactly MESSAGE (a README "Bad input" row).
expect_exact() {
  if [ "$RC" -eq 2 ] && [ ! -s "$OUT" ] && [ "$(cat "$ERR")" == "$2" ]; then
    pass "$1: exit 2, exact message"
  else
    fail "$1: exit 2, exact message" "want: $2" "$(show)"
  fi
}

json_check() {  # json_check NAME FILE PYTHON_EXPR (over d, the parsed file)
  if "$PY" -c 'import json, sys; d = json.load(open(sys.argv[1])); sys.exit(0 if ('"$3"') else 1)' "$2"; then
    pass "$1"
  else
    fail "$1" "$(head -c 600 "$2")"
  fi
}

# ---------------------------------------------------------------------------------------------
# shrink: the lab's 2-fault cause (an insert of unknown outcome, then a rebalance to a smaller
# max.poll.records: State CONTAINS, 500 records lost) planted among 30 leader changes.
"$PY" - "$SRC/configs/lab/unknown_insert_then_smaller_polls_without_dlq.json" "$TMP/planted.json" <<'PYEOF'
import json, sys
c = json.load(open(sys.argv[1]))
c["faults"] += [{"kind": "leader_change", "at": f"{5 + 19 * i}s"} for i in range(30)]
json.dump(c, open(sys.argv[2], "w"))
PYEOF
run "$PIPESIM" shrink "$TMP/planted.json" --seed 1 --until "lost_records > 0" --out "$TMP/shrunk.json"
expect_rc "shrink finds the cause" 0
if grep -q '^kept 2 of 32 faults' "$OUT" && grep -q '^  insert_timeout at 00:01:00.000000' "$OUT" &&
   grep -q '^  rebalance at 00:01:15.000000 (max.poll.records=200)' "$OUT" && grep -q '^removed 30:' "$OUT" &&
   grep -qF "its story: pipesim explain $TMP/shrunk.json --seed 1" "$OUT"; then
  pass "shrink prints the 2 kept faults, the 30 removed and the explain command"
else
  fail "shrink output" "$(show)"
fi
json_check "shrink writes a config with the 2 faults, scheduled" "$TMP/shrunk.json" \
  'sorted(f["kind"] for f in d["faults"]) == ["insert_timeout", "rebalance"] and all("at" in f for f in d["faults"])'
run "$PIPESIM" run "$TMP/shrunk.json" --seed 1 --format json
json_check "its output reproduces: seed 1 still loses 500 records" "$OUT" 'd["metrics"]["lost_records"]["mean"] == 500'

# A day of Poisson faults: the realised timeline is checked to reproduce the run, then shrunk.
cat >"$TMP/day.json" <<'EOF'
{"workload": {"records_per_day": 864000, "profile": "constant"}, "producer": {"acks": "1"},
 "kafka": {"num.partitions": 2}, "connect": {"tasks.max": 2},
 "faults": [{"kind": "broker_crash", "rate_per_day": 8, "duration": "1m"}, {"kind": "worker_crash", "rate_per_day": 16},
            {"kind": "leader_change", "rate_per_day": 24, "duration": "5s"}, {"kind": "task_restart", "rate_per_day": 16}],
 "run": {"duration": "3h", "drain": "10m"}}
EOF
run "$PIPESIM" shrink "$TMP/day.json" --seed 8 --until "lost_records > 0" --out "$TMP/day_shrunk.json"
expect_rc "shrink a Poisson day" 0
grep -q '^pipesim shrink: seed 8 holds lost_records > 0 (lost_records = 1 (> 0)) with 10 faults; the realised timeline as scheduled faults reproduces it$' "$OUT" &&
  pass "shrink says the realised timeline reproduces the seed" || fail "shrink reproduction line" "$(show)"
grep -q '^kept 1 of 10 faults' "$OUT" && grep -q '^  broker_crash at 01:19:47.157817 on broker-1 for ' "$OUT" &&
  pass "shrink keeps the one broker crash (acks=1) of the day" || fail "shrink a day: kept" "$(show)"
run "$PIPESIM" run "$TMP/day_shrunk.json" --seed 8 --format json
json_check "the shrunk day still loses records on seed 8" "$OUT" 'd["metrics"]["lost_records"]["mean"] > 0'

run "$PIPESIM" shrink "$TMP/planted.json" --seed 1 --until "duplicate_rows > 0"
expect_rc "shrink: a condition that does not hold on the seed" 1
grep -q 'the condition does not hold on seed 1 (duplicate_rows = 0 (> 0)): nothing to shrink' "$OUT" &&
  pass "shrink says the condition does not hold" || fail "shrink: condition not holding" "$(show)"
run "$PIPESIM" shrink "$TMP/planted.json" --seed 1 --until "lost_record > 0"
expect_exact "shrink: unknown metric" 'pipesim: --until "lost_record > 0": unknown metric "lost_record"; did you mean "lost_records"? (a metric of one run, as in run --per-seed)'
# Two runs: the empty set (no loss), then the first half of the faults (both causes in it).
run "$PIPESIM" shrink "$TMP/planted.json" --seed 1 --until "lost_records > 0" --max-runs 2
expect_rc "shrink --max-runs 2" 0
grep -q '^kept 16 of 32 faults (2 runs of seed 1; stopped after --max-runs 2: the best so far)' "$OUT" &&
  pass "shrink stops at --max-runs with the best so far" || fail "shrink --max-runs" "$(show)"

# --expect: keep the run breaking check's expectations (its own values).
# A 10-minute run has figures per window, not per day.
echo '{"expect": [{"metric": "lost_records_per_window", "max": 0}]}' >"$TMP/no_loss.json"
run "$PIPESIM" shrink "$TMP/planted.json" --seed 1 --expect "$TMP/no_loss.json"
expect_rc "shrink --expect" 0
grep -qF "holds breaks $TMP/no_loss.json (lost_records_per_window = 500 (max 0)) with 32 faults" "$OUT" &&
  grep -q '^kept 2 of 32 faults' "$OUT" && pass "shrink --expect: 500 lost in the 10-minute window; the same 2 faults" ||
  fail "shrink --expect" "$(show)"
echo '{"expect": [{"metric": "lost_records_per_day", "max": 0}]}' >"$TMP/no_loss_day.json"
run "$PIPESIM" shrink "$TMP/planted.json" --seed 1 --expect "$TMP/no_loss_day.json"
expect_exact "shrink --expect: no per-day figure from a 10-minute run" "pipesim: expectation error at expect[0].metric: lost_records_per_day needs whole days: run.duration is 10m, and a window's figure scaled to a day is not the day's (the traffic profile is not flat); use lost_records_per_window, or a run.duration of whole days"
run "$PIPESIM" shrink "$TMP/planted.json" --seed 1
expect_exact "shrink without a condition" 'pipesim: give one of --until EXPR (e.g. "lost_records > 0") or --expect FILE'
run "$PIPESIM" shrink "$TMP/planted.json" --seed 1 --until "lost_records > 0" --expect "$TMP/no_loss.json"
expect_bad "shrink with both conditions" 'give one of --until EXPR'

# Ctrl-C during the search: the best config so far is written, exit 130. Three days of the day of
# faults make each run of the search long; the signal comes once the search has started.
"$PIPESIM" shrink "$SRC/configs/scenarios/day_of_faults.json" --set run.duration=3d --seed 1 \
  --until "duplicate_rows > 0" --out "$TMP/best.json" >"$OUT" 2>"$ERR" </dev/null &
pid=$!
for ((i = 0; i < 6000; i++)); do
  grep -q 'reproduces it$' "$OUT" 2>/dev/null && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
kill -s INT "$pid" 2>/dev/null
wait "$pid"
RC=$?
if [ "$RC" -eq 130 ] && [ "$(tail -n 1 "$ERR")" == "pipesim: interrupted (SIGINT), the best so far written" ] &&
   grep -q '^kept [0-9]* of [0-9]* faults ([0-9]* runs of seed 1; interrupted: the best so far)' "$OUT" &&
   [ -s "$TMP/best.json" ] && "$PIPESIM" validate "$TMP/best.json" >/dev/null 2>&1; then
  pass "shrink interrupted: exit 130, the best config so far written and valid"
else
  fail "shrink interrupted" "$(show)" "$(ls "$TMP")"
fi

# ---------------------------------------------------------------------------------------------
# --importance: a loss that needs a rare leader change (1.44 a day; 10-minute runs).
cat >"$TMP/rare.json" <<'EOF'
{"workload": {"records_per_day": 864000, "profile": "constant"}, "kafka": {"num.partitions": 1},
 "app": {"on_send_failure": "drop"}, "connect": {"tasks.max": 1},
 "faults": [{"kind": "leader_change", "rate_per_day": 1.44, "duration": "150s", "partitions": "all"}],
 "run": {"duration": "10m", "drain": "5m", "seeds": 200}}
EOF
run "$PIPESIM" run "$TMP/rare.json" --importance leader_change=100 --format json --per-seed
expect_rc "run --importance" 0
cp "$OUT" "$TMP/is.json"
json_check "run --importance: the tilt, its effective sample size and each seed's weight" "$TMP/is.json" \
  'd["importance"]["tilt"] == "leader_change=100" and 0 < d["importance"]["effective_sample_size"] < 200 and all("weight" in r for r in d["runs"]) and abs(d["importance"]["weight_mean"] - sum(r["weight"] for r in d["runs"]) / 200) < 1e-9'
json_check "run --importance: the loss probability is a weighted mean, near 1 - e^-0.01 = 0.00995" "$TMP/is.json" \
  'abs(d["estimates"]["lost_records_probability"]["value"] - sum(r["weight"] * (r["metrics"]["lost_records"] > 0) for r in d["runs"]) / 200) < 1e-12 and 0.005 < d["estimates"]["lost_records_probability"]["value"] < 0.015'
run "$PIPESIM" run "$TMP/rare.json" --importance leader_change=100
grep -q '^importance sampling: faults drawn at leader_change=100 x their rates, each seed weighted by its likelihood ratio; effective sample size' "$OUT" &&
  pass "run --importance: the table says so" || fail "run --importance table" "$(show)"
run "$PIPESIM" run "$TMP/rare.json" --importance leader_change=100 --format csv
grep -q '^importance.tilt,leader_change=100,' "$OUT" && pass "run --importance: CSV rows" || fail "run --importance CSV" "$(show)"
seed=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["extreme_seeds"][-1]["explain"])' "$TMP/is.json")
case "$seed" in
  *"--importance leader_change=100 --seed "*) pass "the extreme seed's explain command carries the tilt" ;;
  *) fail "extreme seed explain command" "$seed" ;;
esac
run "$PIPESIM" explain "$TMP/rare.json" --importance leader_change=100 --seed "${seed##* }"
expect_rc "explain --importance replays the tilted seed" 0
grep -q 'fault leader_change' "$OUT" && grep -q "pipesim explain: faults drawn at leader_change=100 x their rates (run --importance); this seed's weight is" "$ERR" &&
  pass "explain --importance: the tilted seed's leader change and its weight" || fail "explain --importance" "$(show)"
echo '{"expect": [{"metric": "lost_records_probability", "max": 0.05}]}' >"$TMP/expect.json"
run "$PIPESIM" check "$TMP/rare.json" --expect "$TMP/expect.json" --importance leader_change=100
expect_rc "check --importance: the loss probability is below 5%" 0
grep -q '^PASS  lost_records_probability <= 0.05 at 95% confidence: estimate .* (importance leader_change=100, effective sample size' "$OUT" &&
  pass "check --importance says so" || fail "check --importance" "$(show)"
run "$PIPESIM" compare "$TMP/rare.json" "$TMP/rare.json" --importance leader_change=100 --seeds 20 --format json
json_check "compare --importance: both sides weighted alike" "$OUT" \
  'd["importance"]["tilt"] == "leader_change=100" and d["importance"]["effective_sample_size_a"] == d["importance"]["effective_sample_size_b"] and all(m["verdict"] == "identical" for m in d["metrics"].values())'
echo '{"connect.max.poll.records": [100, 500]}' >"$TMP/grid.json"
run "$PIPESIM" sweep "$TMP/rare.json" --grid "$TMP/grid.json" --seeds 10 --importance leader_change=100 --per-seed --out "$TMP/sw"
expect_rc "sweep --importance" 0
json_check "sweep --importance: the manifest holds the tilt" "$TMP/sw/sweep.json" 'd["importance"] == "leader_change=100"'
if "$PY" -c 'import json,sys; l=[json.loads(x) for x in open(sys.argv[1])]; assert len(l) == 20 and all("weight" in x for x in l)' "$TMP/sw/seeds.jsonl"; then
  pass "sweep --importance: every seed line has its weight"
else
  fail "sweep --importance seeds" "$(head -c 300 "$TMP/sw/seeds.jsonl")"
fi

run "$PIPESIM" run "$TMP/rare.json" --importance worker_crash=10
expect_exact "--importance of a kind without a Poisson fault" 'pipesim: --importance "worker_crash=10": "worker_crash" is not a fault kind with a Poisson rate in this config (leader_change)'
run "$PIPESIM" run "$TMP/rare.json" --importance leader_change=0
expect_exact "--importance factor 0" 'pipesim: --importance "leader_change=0": leader_change: expected a factor above 0 and at most 1e6, found "0"'
run "$PIPESIM" sweep "$TMP/rare.json" --grid "$TMP/grid.json" --importance leader_change --out "$TMP/sw2"
expect_bad "sweep --importance without a factor" 'expected KIND=FACTOR[,KIND=FACTOR...], found "leader_change"'

finish
