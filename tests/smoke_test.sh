#!/usr/bin/env bash
# Every subcommand of the pipesim binary once, end to end, on a small config: the
# sanitizer build's share of the command line (CI's ASan + UBSan stage runs this
# instead of the whole CLI suite, which the Release stage runs: cli_test,
# rare_cli_test, sweep_cli_test, report_test, bad_input_sweep). Each command must exit
# as documented and write what it says; ASan and UBSan abort the binary on any
# finding, which fails the command's exit code check.
#
# Run by ctest as: PIPESIM=<binary> PIPESIM_SOURCE_DIR=<repo root> bash tests/smoke_test.sh
# Prints "N passed, M failed" last; exits non-zero when any check failed.
set -u

PIPESIM=${PIPESIM:?set PIPESIM to the pipesim binary}
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3

TMP=$(mktemp -d "${TMPDIR:-/tmp}/pipesim_smoke_test.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"

write() {  # write FILE CONTENT
  printf '%s\n' "$2" >"$TMP/$1"
}

# is_json NAME FILE: FILE parses as JSON (or JSON lines when it ends in .jsonl).
is_json() {
  if "$PY" -c '
import json, sys
path = sys.argv[1]
text = open(path).read()
if path.endswith(".jsonl"):
    assert text.strip(), "empty"
    [json.loads(line) for line in text.splitlines()]
else:
    json.loads(text)
' "$2" 2>"$TMP/py_err"; then
    pass "$1"
  else
    fail "$1" "$(head -c 300 "$TMP/py_err")"
  fi
}

# 8 min at 100 records/s on 2 partitions with one worker crash: every model path
# that a crash takes (replay, commit, the sink's state queries) in a few seconds even
# under the sanitizers.
write small.json '{"workload":{"records_per_day":8640000,"profile":"constant"},"kafka":{"num.partitions":2},
  "connect":{"tasks.max":2},"connector":{"exactlyOnce":true},
  "faults":[{"kind":"worker_crash","at":"4m"}],"run":{"duration":"8m","drain":"3m"}}'
write other.json '{"workload":{"records_per_day":8640000,"profile":"constant"},"kafka":{"num.partitions":2},
  "connect":{"tasks.max":2},"faults":[{"kind":"worker_crash","at":"4m"}],"run":{"duration":"8m","drain":"3m"}}'
CFG=$TMP/small.json

run "$PIPESIM" --version
expect_ok "--version"

run "$PIPESIM" validate "$CFG"
expect_ok "validate"
run "$PIPESIM" validate "$CFG" --print
expect_ok "validate --print"
cp "$OUT" "$TMP/printed.json"
is_json "validate --print writes JSON" "$TMP/printed.json"
run "$PIPESIM" validate --reference
if [ "$RC" -eq 0 ] && grep -q '^### `connector`' "$OUT"; then pass "validate --reference"; else fail "validate --reference" "$(show)"; fi
write bad.json '{"connect": {"max.pol.records": 200}}'
run "$PIPESIM" validate "$TMP/bad.json"
expect_bad "validate: an unknown key" 'did you mean "max.poll.records"'

run "$PIPESIM" run "$CFG" --seeds 2 --per-seed --format json --out "$TMP/run.json"
expect_ok "run --per-seed --format json --out"
is_json "run writes JSON" "$TMP/run.json"
run "$PIPESIM" run "$CFG" --seed 1
if [ "$RC" -eq 0 ] && grep -q "duplicate" "$OUT"; then pass "run: the table"; else fail "run: the table" "$(show)"; fi
run "$PIPESIM" run "$CFG" --seeds 2 --format csv
if [ "$RC" -eq 0 ] && [ "$(wc -l <"$OUT")" -gt 1 ]; then pass "run --format csv"; else fail "run --format csv" "$(show)"; fi

run "$PIPESIM" decide --state AFTER_PROCESSING --stored 10,20 --batch 5,15 --explain
if [ "$RC" -eq 0 ] && [ -s "$OUT" ]; then pass "decide --explain"; else fail "decide --explain" "$(show)"; fi
run_stdin '{"state":"BEFORE_PROCESSING","stored":[100,199],"batch":[100,299]}' "$PIPESIM" decide --cases -
if [ "$RC" -eq 0 ] && [ -s "$OUT" ]; then pass "decide --cases -"; else fail "decide --cases -" "$(show)"; fi

run "$PIPESIM" compare "$TMP/other.json" "$CFG" --seeds 2 --format json
expect_ok "compare"
cp "$OUT" "$TMP/compare.json"
is_json "compare writes JSON" "$TMP/compare.json"

write expect.json '{"expect": [{"metric": "lost_records_per_window", "max": 1000000000}]}'
run "$PIPESIM" check "$CFG" --expect "$TMP/expect.json" --seeds 2 --format json
expect_ok "check"
cp "$OUT" "$TMP/check.json"
is_json "check writes JSON" "$TMP/check.json"

# A config with one finding (at-least-once replay): its closing effect is simulated (two runs),
# not five findings' worth.
write one_finding.json '{"workload":{"records_per_day":8640000,"profile":"constant"},
  "kafka":{"num.partitions":2,"min.insync.replicas":2},"connect":{"tasks.max":2},
  "producer":{"max.in.flight.requests.per.connection":1},
  "app":{"on_send_failure":"retry_table","resend_policy":"check_by_key"},
  "clickhouse":{"replicated_deduplication_window":100000},"run":{"duration":"8m","drain":"3m"}}'
run "$PIPESIM" lint "$TMP/one_finding.json" --quick-seeds 1 --effect-seeds 1
if [ "$RC" -eq 1 ] && grep -q "closing it: duplicate_rows_by_entry.task_restart_replay" "$OUT"; then
  pass "lint: the finding and its simulated effect"
else
  fail "lint: the finding and its simulated effect" "$(show)"
fi

run "$PIPESIM" explain "$CFG" --seed 1
if [ "$RC" -eq 0 ] && [ -s "$OUT" ]; then pass "explain"; else fail "explain" "$(show)"; fi

run "$PIPESIM" trace "$CFG" --seed 1 --out "$TMP/trace.json" --to 6m
expect_ok "trace"
is_json "trace writes JSON" "$TMP/trace.json"

write sweep.json '{"workload":{"records_per_day":8640000,"profile":"constant"},"kafka":{"num.partitions":2},
  "connect":{"tasks.max":2},"faults":[{"kind":"worker_crash","at":"4m"}],"run":{"duration":"8m","drain":"3m","seeds":1},
  "sweep":{"connector.exactlyOnce":[false,true]}}'
run "$PIPESIM" sweep "$TMP/sweep.json" --out "$TMP/sweep"
expect_ok "sweep"
is_json "sweep writes points.jsonl" "$TMP/sweep/points.jsonl"
for k in 1 2; do
  run "$PIPESIM" sweep "$TMP/sweep.json" --shard "$k/2" --out "$TMP/shard$k"
  expect_ok "sweep --shard $k/2"
done
run "$PIPESIM" merge "$TMP/shard1" "$TMP/shard2" --out "$TMP/merged"
expect_ok "merge"
if cmp -s "$TMP/merged/points.jsonl" "$TMP/sweep/points.jsonl"; then
  pass "merge of 2 shards: the points of the one-machine sweep"
else
  fail "merge of 2 shards: the points of the one-machine sweep"
fi

run "$PIPESIM" shrink "$CFG" --seed 1 --until "duplicate_rows >= 0" --max-runs 3 --out "$TMP/shrunk.json"
expect_ok "shrink"
is_json "shrink writes a config" "$TMP/shrunk.json"

# Importance sampling tilts a Poisson fault's rate: the crash as a rate here.
run "$PIPESIM" run "$CFG" --seeds 2 --set 'faults=[{"kind":"worker_crash","rate_per_day":48}]' \
  --importance worker_crash=2 --format json
expect_ok "run --importance"

run "$PIPESIM" report "$TMP/run.json" --out "$TMP/run.html"
if [ "$RC" -eq 0 ] && grep -q "<canvas" "$TMP/run.html"; then pass "report: a run's page"; else fail "report: a run's page" "$(show)"; fi
run "$PIPESIM" report "$TMP/compare.json" --out "$TMP/compare.html"
expect_ok "report: a compare page"
run "$PIPESIM" report "$TMP/check.json" --out "$TMP/check.html"
expect_ok "report: a check page"
run "$PIPESIM" report "$TMP/sweep" --out "$TMP/sweep.html"
expect_ok "report: a sweep page"

finish
