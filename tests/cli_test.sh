#!/usr/bin/env bash
# End-to-end checks of the pipesim binary (docs/model.md §7, §9): exit codes (0 ok,
# 2 bad usage or bad config), diagnostics on stderr only, byte-identical output
# for the same config and seeds whatever the thread count, the JSON/CSV shapes
# other tools rely on, atomic --out, and `pipesim decide`.
#
# Run by ctest as: PIPESIM=<binary> PIPESIM_SOURCE_DIR=<repo root> bash tests/cli_test.sh
# Prints "N passed, M failed" last; exits non-zero when any check failed.
set -u

PIPESIM=${PIPESIM:?set PIPESIM to the pipesim binary}
SRC=${PIPESIM_SOURCE_DIR:-}
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3

TMP=$(mktemp -d "${TMPDIR:-/tmp}/pipesim_cli_test.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"

# expect_stderr_line NAME LINE: the last run's stderr is exactly LINE.
expect_stderr_line() {
  local name=$1 want=$2
  if [ "$(cat "$ERR")" == "$want" ]; then
    pass "$name: exact message"
  else
    fail "$name: exact message" "want: $want" "got:  $(cat "$ERR")"
  fi
}

# json_check NAME FILE PYTHON_EXPR: the expression (over `d`, the parsed file) is true.
json_check() {
  local name=$1 file=$2 expr=$3
  if "$PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if ('"$expr"') else 1)
' "$file" 2>"$TMP/py_err"; then
    pass "$name"
  else
    fail "$name" "python: $expr" "$(head -c 300 "$TMP/py_err")"
  fi
}

write() {  # write FILE CONTENT
  printf '%s\n' "$2" >"$TMP/$1"
}

# ---------------------------------------------------------------------------------------------
# Configs

# 30 min at 100 records/s: each record is its own put, so the run is ~180,000 puts (a short
# run keeps the sanitizer build's many runs of it within the test's time).
SMALL='{"workload":{"records_per_day":8640000,"profile":"constant"},"kafka":{"num.partitions":2},"connect":{"tasks.max":2},"run":{"duration":"10m","drain":"5m","seeds":4}}'
write small.json "$SMALL"
CFG=$TMP/small.json

# ---------------------------------------------------------------------------------------------
# validate

run "$PIPESIM" validate "$CFG"
expect_rc "validate good config" 0
if grep -q '^config OK (digest [0-9a-f]\{16\}): 2 partitions, 2 tasks on 1 worker(s), exactlyOnce=false, 5 fault spec(s)$' "$OUT" &&
   [ ! -s "$ERR" ]; then
  pass "validate good config: summary line on stdout, nothing on stderr"
else
  fail "validate good config: summary line on stdout, nothing on stderr" "$(show)"
fi
VALIDATE_DIGEST=$(sed -n 's/^config OK (digest \([0-9a-f]*\)).*/\1/p' "$OUT")

# docs/reference.md's config reference (its last section) is what `validate --reference` prints:
# every key with its default and its range (the ranges the swarm test draws from).
run "$PIPESIM" validate --reference
if [ -n "$SRC" ] && [ "$RC" -eq 0 ] && sed -n '/^### `workload`/,$p' "$SRC/docs/reference.md" | cmp -s - "$OUT"; then
  pass "validate --reference: docs/reference.md's config reference, word for word"
else
  fail "validate --reference: docs/reference.md's config reference, word for word" \
    "regenerate it: build/pipesim validate --reference, from docs/reference.md's '### \`workload\`' to its end"
fi

run "$PIPESIM" validate
expect_rc "validate with no config (production baseline)" 0
BASELINE_DIGEST=$(sed -n 's/^config OK (digest \([0-9a-f]*\)).*/\1/p' "$OUT")
if grep -qF ': 8 partitions, 8 tasks on 1 worker(s), exactlyOnce=false, 5 fault spec(s)' "$OUT"; then
  pass "validate with no config: the docs/model.md §8 baseline"
else
  fail "validate with no config: the docs/model.md §8 baseline" "$(show)"
fi

if [ -n "$SRC" ] && [ -f "$SRC/configs/production.json" ]; then
  run "$PIPESIM" validate "$SRC/configs/production.json"
  expect_rc "validate configs/production.json" 0
  if grep -qF "config OK (digest $BASELINE_DIGEST)" "$OUT"; then
    pass "configs/production.json has the digest of the empty config"
  else
    fail "configs/production.json has the digest of the empty config ($BASELINE_DIGEST)" "$(show)"
  fi
fi

run "$PIPESIM" validate "$CFG" --print
expect_rc "validate --print" 0
json_check "validate --print: effective config with every section" "$OUT" \
  'all(s in d for s in ["workload","producer","app","kafka","connect","operator","connector","clickhouse","keeper","faults","run"]) and d["kafka"]["num.partitions"] == 2 and d["connect"]["max.poll.records"] == 500 and d["run"]["duration"] == "10m"'
cp "$OUT" "$TMP/effective.json"
run "$PIPESIM" validate "$TMP/effective.json"
if [ "$RC" -eq 0 ] && grep -qF "config OK (digest $VALIDATE_DIGEST)" "$OUT"; then
  pass "validate --print output validates with the same digest"
else
  fail "validate --print output validates with the same digest ($VALIDATE_DIGEST)" "$(show)"
fi

# An ignored real property is listed, not refused.
write ignored.json '{"connector":{"name":"x","config":{"connector.class":"com.clickhouse.kafka.connect.ClickHouseSinkConnector","key.converter":"org.apache.kafka.connect.storage.StringConverter","exactlyOnce":"true"}}}'
run "$PIPESIM" validate "$TMP/ignored.json"
if [ "$RC" -eq 0 ] && grep -qF 'exactlyOnce=true' "$OUT" &&
   grep -qxF 'ignored (a real property pipesim does not model): connector.config.key.converter' "$OUT" &&
   ! grep -qF 'connector.class' "$OUT"; then
  pass "validate REST-form connector: exactlyOnce and connector.class read, key.converter listed as ignored"
else
  fail "validate REST-form connector: exactlyOnce and connector.class read, key.converter listed as ignored" "$(show)"
fi

# Real inputs on every command that takes a config: the three Connect REST bodies as whole
# files give the same connector, and the properties files are read by each command.
write post.json '{"name":"sink","config":{"connector.class":"com.clickhouse.kafka.connect.ClickHouseSinkConnector","tasks.max":"2","exactlyOnce":"true","consumer.override.max.poll.records":"200"}}'
"$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); json.dump(d["config"], open(sys.argv[2],"w")); d["tasks"]=[{"connector":"sink","task":0}]; d["type"]="sink"; json.dump(d, open(sys.argv[3],"w"))' \
  "$TMP/post.json" "$TMP/put.json" "$TMP/get.json"
for body in post put get; do
  run "$PIPESIM" validate --print "$TMP/$body.json"
  if [ "$RC" -eq 0 ] && "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d["connect"]["tasks.max"]==2 and d["connect"]["max.poll.records"]==200 and d["connector"]["exactlyOnce"] else 1)' "$OUT"; then
    pass "a Connect REST $body body as the whole file: tasks.max, the consumer override and exactlyOnce read"
  else
    fail "a Connect REST $body body as the whole file" "$(show)"
  fi
done
write rest_grid.json '{"connect.offset.flush.interval.ms": [10000, 60000]}'
run "$PIPESIM" sweep "$TMP/put.json" --grid "$TMP/rest_grid.json" --dry-run
if [ "$RC" -eq 0 ] && [ "$(grep -c '"point"' "$OUT")" -eq 2 ]; then
  pass "sweep takes a Connect REST body as its config"
else
  fail "sweep takes a Connect REST body as its config" "$(show)"
fi
printf '# worker\nbootstrap.servers=k:9092\noffset.flush.interval.ms=10000\nsession.timeout.ms=20000\nconsumer.max.poll.records=300\nplugin.path=/a,\\\n  /b\n' >"$TMP/worker.properties"
printf 'max.poll.interval.ms: 600000\n' >"$TMP/consumer.properties"
printf 'acks=1\ncompression.type=lz4\n' >"$TMP/producer.properties"
PROPS=(--worker-properties "$TMP/worker.properties" --consumer-properties "$TMP/consumer.properties" --producer-properties "$TMP/producer.properties")
run "$PIPESIM" validate --print "${PROPS[@]}"
if [ "$RC" -eq 0 ] && "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); c=d["connect"]; sys.exit(0 if (c["offset.flush.interval.ms"],c["worker.session.timeout.ms"],c["session.timeout.ms"],c["max.poll.records"],c["max.poll.interval.ms"],d["producer"]["acks"])==(10000,20000,45000,300,600000,"1") else 1)' "$OUT"; then
  pass "properties files: each key where it means what it means (the worker's session.timeout.ms is its group's)"
else
  fail "properties files: each key where it means what it means" "$(show)"
fi
run "$PIPESIM" validate "${PROPS[@]}"
if grep -qxF "ignored (a real property pipesim does not model): $TMP/worker.properties: plugin.path" "$OUT" &&
   grep -qxF "ignored (a real property pipesim does not model): $TMP/producer.properties: compression.type" "$OUT"; then
  pass "properties files: real keys not modelled are listed as ignored, naming the file"
else
  fail "properties files: real keys not modelled are listed as ignored, naming the file" "$(show)"
fi
for cmd in "run --seeds 1" "explain --seed 1" "lint --format json --quick-seeds 1 --effect-seeds 0" "compare $CFG --seeds 1" "check --seeds 2 --expect $TMP/pass_any.json" "trace --seed 1 --to 1m --out $TMP/props_trace.json"; do
  write pass_any.json '{"expect":[{"metric":"lost_records","max":1e18}]}'
  # shellcheck disable=SC2086
  run "$PIPESIM" ${cmd%% *} "$CFG" ${cmd#* } "${PROPS[@]}"
  [ "${cmd%% *}" == lint ] && [ "$RC" -eq 1 ] && RC=0
  if [ "$RC" -eq 0 ]; then
    pass "${cmd%% *} takes the properties files"
  else
    fail "${cmd%% *} takes the properties files" "$(show)"
  fi
done

# Bad configs: exit 2, nothing on stdout, the message (path, expected, found) on stderr.
bad_config() {  # bad_config NAME JSON EXACT_MESSAGE
  write bad.json "$2"
  run "$PIPESIM" validate "$TMP/bad.json"
  expect_bad "validate $1" "$3"
  expect_stderr_line "validate $1" "pipesim: $TMP/bad.json: $3"
}
bad_config "string for an integer" '{"connect":{"max.poll.records":"500"}}' \
  'config error at connect.max.poll.records: expected an integer from 1 to 2147483647, found "500"'
bad_config "unknown key" '{"connect":{"max.pol.records":200}}' \
  'config error at connect.max.pol.records: unknown key; did you mean "max.poll.records"?'
bad_config "unknown section" '{"conect":{}}' \
  'config error at conect: unknown section; did you mean "connect"?'
bad_config "out of range" '{"kafka":{"num.partitions":0}}' \
  'config error at kafka.num.partitions: expected an integer from 1 to 4096, found 0'
bad_config "bad duration" '{"run":{"duration":"2 hours"}}' \
  'config error at run.duration: expected a duration such as "30s" or "1h30m" (units d, h, m, s, ms, us) from 1s to 3650d, found "2 hours"'
bad_config "bufferCount with exactlyOnce" '{"connector":{"exactlyOnce":true,"bufferCount":10}}' \
  'config error at connector.bufferCount: bufferCount > 0 cannot be combined with exactlyOnce=true (the connector refuses this configuration), found 10'
bad_config "unknown fault kind" '{"faults":[{"kind":"worker_crsh","rate_per_day":1}]}' \
  'config error at faults[0].kind: unknown fault kind "worker_crsh"; did you mean "worker_crash"?'
bad_config "negative fetch.min.bytes" '{"connect":{"fetch.min.bytes":-1}}' \
  'config error at connect.fetch.min.bytes: expected an integer from 0 to 2147483647, found -1'
bad_config "removed workload.tick" '{"workload":{"tick":"1s"}}' \
  'config error at workload.tick: no longer exists: records arrive one by one at their own instants (workload.arrivals: "poisson" or "fixed" for evenly spaced), so there is no arrival quantum to set'
bad_config "fault target out of range" '{"faults":[{"kind":"worker_crash","at":"2h","target":"worker-3"}]}' \
  'config error at faults[0].target: expected "worker-0" to "worker-0", found "worker-3"'

printf '{\n  "run": {"seeds": 4,}\n}\n' >"$TMP/malformed.json"
run "$PIPESIM" validate "$TMP/malformed.json"
expect_bad "validate malformed JSON" "config error: $TMP/malformed.json: malformed JSON at line 2, column 22: syntax error"

run "$PIPESIM" validate "$TMP/does-not-exist.json"
expect_bad "validate missing file" "config error: cannot read $TMP/does-not-exist.json: No such file or directory"

run "$PIPESIM" validate "$CFG" --set connect.max.poll.records=0
expect_bad "validate --set out of range" \
  'config error at connect.max.poll.records: expected an integer from 1 to 2147483647, found 0'

run "$PIPESIM" validate "$CFG" --set connect.max.poll.records
expect_bad "validate --set without =" 'bad --set "connect.max.poll.records": expected section.key=value'

run "$PIPESIM" validate "$CFG" --set conect.tasks.max=4
expect_bad "validate --set unknown section" 'bad --set "conect.tasks.max=4": unknown section "conect"; did you mean "connect"?'

run "$PIPESIM" validate "$CFG" --set connect.max.poll.records=200 --set connector.exactlyOnce=true --print
json_check "validate --set typed values" "$OUT" \
  'd["connect"]["max.poll.records"] == 200 and d["connector"]["exactlyOnce"] is True'

# ---------------------------------------------------------------------------------------------
# run: determinism and output shapes

run "$PIPESIM" run "$CFG" --seeds 4 --format json
expect_rc "run --format json" 0
cp "$OUT" "$TMP/run1.json"
run "$PIPESIM" run "$CFG" --seeds 4 --format json
cp "$OUT" "$TMP/run2.json"
if [ -s "$TMP/run1.json" ] && cmp -s "$TMP/run1.json" "$TMP/run2.json"; then
  pass "run twice: byte-identical JSON"
else
  fail "run twice: byte-identical JSON" "$(diff "$TMP/run1.json" "$TMP/run2.json" | head -5)"
fi

run "$PIPESIM" run "$CFG" --seeds 4 --format json --threads 1
cp "$OUT" "$TMP/t1.json"
run "$PIPESIM" run "$CFG" --seeds 4 --format json --threads 2
cp "$OUT" "$TMP/t2.json"
if [ -s "$TMP/t1.json" ] && cmp -s "$TMP/t1.json" "$TMP/t2.json" && cmp -s "$TMP/t1.json" "$TMP/run1.json"; then
  pass "run --threads 1 vs --threads 2: byte-identical JSON"
else
  fail "run --threads 1 vs --threads 2: byte-identical JSON" "$(diff "$TMP/t1.json" "$TMP/t2.json" | head -5)"
fi

run "$PIPESIM" run "$CFG" --seeds 4 --format json --threads 3
if [ -s "$OUT" ] && cmp -s "$OUT" "$TMP/run1.json"; then
  pass "run --threads 3 (more threads than cores): byte-identical JSON"
else
  fail "run --threads 3: byte-identical JSON" "$(diff "$OUT" "$TMP/run1.json" | head -5)"
fi

json_check "run JSON: top-level keys in docs/model.md §9 order" "$TMP/run1.json" \
  'list(d)[:4] == ["pipesim_version", "config_digest", "seeds", "metrics"] and "runs" not in d'
json_check "run JSON: seeds {first 1, count 4}" "$TMP/run1.json" \
  'd["seeds"] == {"first": 1, "count": 4}'
json_check "run JSON: config_digest is 16 hex digits, the one validate prints" "$TMP/run1.json" \
  'd["config_digest"] == "'"$VALIDATE_DIGEST"'" and len(d["config_digest"]) == 16'
json_check "run JSON: duplicate_rows has mean/stddev/ci95/p50/p95/p99" "$TMP/run1.json" \
  'sorted(d["metrics"]["duplicate_rows"]) == sorted(["mean","stddev","ci95","p50","p95","p99"]) and len(d["metrics"]["duplicate_rows"]["ci95"]) == 2'
json_check "run JSON: ci95 is [lo, hi] around the mean" "$TMP/run1.json" \
  'all(m["ci95"][0] <= m["mean"] <= m["ci95"][1] for m in [d["metrics"]["records_produced"], d["metrics"]["duplicate_rows"]])'
json_check "run JSON: docs/model.md §9 metric names" "$TMP/run1.json" \
  'all(k in d["metrics"] for k in ["records_produced","kafka_records","clickhouse_rows","duplicate_rows","duplicate_rows_by_entry","lost_records","lost_records_by_cause","pending_records","dlq_records_in_clickhouse","dlq_records_missing","state_mismatch_throws","classifications","task_failures","max_lag_records","inserts","dedup_hits","faults_fired","events_processed"]) and all(k in d["metrics"]["duplicate_rows_by_entry"] for k in ["producer_retry","insert_timeout_redelivery","task_restart_replay","manual_resend","state_reset"]) and "mean" in d["metrics"]["duplicate_rows_by_entry"]["producer_retry"]'
# 8,640,000 records/day = 100/s for 10 min = 60,000 records (Poisson, sd 245 a seed, 122 for
# the mean of 4): mean within 1%.
json_check "run JSON: records_produced is about 100/s x 10 min" "$TMP/run1.json" \
  'abs(d["metrics"]["records_produced"]["mean"] - 60000) < 600'

run "$PIPESIM" run "$CFG" --format json
if [ "$RC" -eq 0 ] && cmp -s "$OUT" "$TMP/run1.json"; then
  pass "run without --seeds uses run.seeds (4) from the config"
else
  fail "run without --seeds uses run.seeds (4) from the config" "$(show)"
fi

# Self-describing JSON: what ran (duration, drain, the effective config, ignored keys) and the
# seeds with the most duplicates / losses with the command that tells their story.
write selfdesc.json '{"workload":{"records_per_day":8640000,"profile":"constant"},"kafka":{"num.partitions":2},"connect":{"tasks.max":2,"plugin.path":"/x"},"run":{"duration":"10m","drain":"5m","seeds":4}}'
run "$PIPESIM" run "$TMP/selfdesc.json" --seeds 4 --format json
json_check "run JSON: duration, drain, the effective config and the ignored keys" "$OUT" \
  'd["duration"] == "10m" and d["drain"] == "5m" and d["config"]["connect"]["max.poll.records"] == 500 and d["ignored"] == ["connect.plugin.path"]'
json_check "run JSON: extreme seeds name the explain command of their seed" "$OUT" \
  'all(x["explain"].startswith("pipesim explain ") and x["explain"].endswith(" --seed %d" % x["seed"]) for x in d["extreme_seeds"])'
if grep -qxF "pipesim: ignored (a real property pipesim does not model): connect.plugin.path" "$ERR"; then
  pass "run: the ignored notice goes to stderr"
else
  fail "run: the ignored notice goes to stderr" "$(show)"
fi
bad_exact_early() {  # the bad_exact of the bad-input section, usable here
  run "${@:3}"
  if [ "$RC" -eq 2 ] && [ ! -s "$OUT" ] && [ "$(cat "$ERR")" == "$2" ]; then pass "bad input, $1"; else fail "bad input, $1" "$(show)"; fi
}
bad_exact_early "--per-seed with a table" "pipesim: --per-seed needs --format json or csv (a table shows the summary only)" \
  "$PIPESIM" run "$CFG" --per-seed

run "$PIPESIM" run "$CFG" --seeds 4 --format json --per-seed
expect_rc "run --per-seed" 0
cp "$OUT" "$TMP/per_seed.json"
json_check "run --per-seed: runs has one {seed, metrics} per seed" "$TMP/per_seed.json" \
  'list(d)[-1] == "runs" and [r["seed"] for r in d["runs"]] == [1,2,3,4] and all(sorted(r) == ["metrics","seed"] for r in d["runs"])'
json_check "run --per-seed: plain numbers with the same nesting" "$TMP/per_seed.json" \
  'all(isinstance(r["metrics"]["duplicate_rows"], (int, float)) and isinstance(r["metrics"]["duplicate_rows_by_entry"]["state_reset"], (int, float)) for r in d["runs"])'
json_check "run --per-seed: summary mean is the mean of the runs" "$TMP/per_seed.json" \
  'abs(sum(r["metrics"]["records_produced"] for r in d["runs"]) / 4 - d["metrics"]["records_produced"]["mean"]) < 1e-6'
json_check "run --per-seed: summary part unchanged" "$TMP/per_seed.json" \
  'd["metrics"] == json.load(open("'"$TMP/run1.json"'"))["metrics"]'

run "$PIPESIM" run "$CFG" --seed 3 --format json --per-seed
json_check "run --seed 3: one run, seed 3" "$OUT" \
  'd["seeds"] == {"first": 3, "count": 1} and [r["seed"] for r in d["runs"]] == [3]'
cp "$OUT" "$TMP/seed3.json"
"$PY" -c '
import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
sys.exit(0 if a["runs"][0]["metrics"] == b["runs"][2]["metrics"] else 1)' "$TMP/seed3.json" "$TMP/per_seed.json" 2>/dev/null &&
  pass "run --seed 3 replays the third run of seeds 1..4 exactly" ||
  fail "run --seed 3 replays the third run of seeds 1..4 exactly"

run "$PIPESIM" run "$CFG" --seeds 4 --format csv
expect_rc "run --format csv" 0
if [ "$(head -n 1 "$OUT")" == "metric,mean,stddev,ci95_lo,ci95_hi,p50,p95,p99" ]; then
  pass "run --format csv: header line"
else
  fail "run --format csv: header line" "got: $(head -n 1 "$OUT")"
fi
if grep -q '^duplicate_rows,' "$OUT" && grep -q '^duplicate_rows_by_entry\.producer_retry,' "$OUT" &&
   "$PY" -c 'import csv,sys; rows=list(csv.reader(open(sys.argv[1]))); sys.exit(0 if all(len(r)==8 for r in rows) else 1)' "$OUT"; then
  pass "run --format csv: one 8-column line per metric, dotted names"
else
  fail "run --format csv: one 8-column line per metric, dotted names" "$(head -3 "$OUT")"
fi
# Self-describing: the estimates, the effective config (every default) and the ignored keys follow.
if grep -qx 'config.run.duration,10m,,,,,,' "$OUT" && grep -qx 'config.run.drain,5m,,,,,,' "$OUT" &&
   grep -q '^estimates\.duplicate_rows_per_window,' "$OUT" && grep -qx 'config.connect.session.timeout.ms,45000,,,,,,' "$OUT"; then
  pass "run --format csv: estimates and the effective config (every default) as rows"
else
  fail "run --format csv: estimates and the effective config as rows" "$(grep -c . "$OUT") lines"
fi

run "$PIPESIM" run "$CFG" --seeds 2
if [ "$RC" -eq 0 ] && grep -q '^duplicate_rows ' "$OUT"; then
  pass "run default table format"
else
  fail "run default table format" "$(show)"
fi
# A 10-minute run reports per 10m window, never per day; one seed says once that it gives no interval.
run "$PIPESIM" run "$CFG" --seed 1
if grep -q '^duplicate rows per 10m window  *0  -  *$' "$OUT" && ! grep -q 'per day' "$OUT" &&
   grep -qx -- '-: one seed gives no interval (a share of runs or episodes has its Wilson interval); run --seeds 2 or more' "$OUT" &&
   [ "$(grep -c 'one seed gives no interval' "$OUT")" -eq 1 ] && grep -q '^runs losing any record  *0  \[0, 0.793\]  *0 of 1 run$' "$OUT"; then
  pass "run: a window's figures per window; one seed's missing intervals said once"
else
  fail "run: per window, one seed" "$(show)"
fi

# ---------------------------------------------------------------------------------------------
# run: bad usage

run "$PIPESIM" run "$CFG" --seeds 4 --format json --set connect.max.pol.records=200
expect_bad "run with a bad --set" 'config error at connect.max.pol.records: unknown key; did you mean "max.poll.records"?'

run "$PIPESIM" run "$CFG" --seeds 4 --format json --set nodot
expect_bad "run with a malformed --set" 'bad --set "nodot": expected section.key=value'

run "$PIPESIM" run "$TMP/does-not-exist.json" --format json
expect_bad "run with a missing config file" "cannot read $TMP/does-not-exist.json"

run "$PIPESIM" frobnicate
expect_rc "unknown subcommand" 2
[ ! -s "$OUT" ] && [ -s "$ERR" ] && pass "unknown subcommand: message on stderr only" ||
  fail "unknown subcommand: message on stderr only" "$(show)"

run "$PIPESIM"
expect_rc "no subcommand" 2

run "$PIPESIM" run "$CFG" --bogus-flag
expect_rc "run with an unknown flag" 2
[ ! -s "$OUT" ] && [ -s "$ERR" ] && pass "unknown flag: message on stderr only" ||
  fail "unknown flag: message on stderr only" "$(show)"

run "$PIPESIM" run "$CFG" --format xml
expect_rc "run --format xml" 2

run "$PIPESIM" run "$CFG" --seeds 0
expect_rc "run --seeds 0" 2

run "$PIPESIM" run "$CFG" --seed 1 --seeds 2
expect_rc "run --seed with --seeds" 2

run "$PIPESIM" run "$CFG" --threads 0
expect_rc "run --threads 0" 2

run "$PIPESIM" --version
if [ "$RC" -eq 0 ] && grep -q '^pipesim [0-9]' "$OUT"; then
  pass "--version"
else
  fail "--version" "$(show)"
fi

# ---------------------------------------------------------------------------------------------
# run --out

mkdir -p "$TMP/outdir"
run "$PIPESIM" run "$CFG" --seeds 4 --format json --out "$TMP/outdir/result.json"
expect_rc "run --out" 0
if [ ! -s "$OUT" ] && cmp -s "$TMP/outdir/result.json" "$TMP/run1.json"; then
  pass "run --out: the file holds the result, stdout is empty"
else
  fail "run --out: the file holds the result, stdout is empty" "$(show)"
fi
if compgen -G "$TMP/outdir/result.json.tmp.*" >/dev/null; then
  fail "run --out: no result.json.tmp.* left behind" "$(ls "$TMP/outdir")"
else
  pass "run --out: no result.json.tmp.* left behind"
fi
if [ "$(ls "$TMP/outdir")" == "result.json" ]; then
  pass "run --out: nothing else in the directory"
else
  fail "run --out: nothing else in the directory" "$(ls "$TMP/outdir")"
fi

# Overwrites an existing file.
echo stale >"$TMP/outdir/result.json"
run "$PIPESIM" run "$CFG" --seeds 4 --format json --out "$TMP/outdir/result.json"
cmp -s "$TMP/outdir/result.json" "$TMP/run1.json" && pass "run --out replaces an existing file" ||
  fail "run --out replaces an existing file"

run "$PIPESIM" run "$CFG" --seeds 4 --format json --out "$TMP/no-such-dir/result.json"
expect_bad "run --out into a missing directory" "cannot write $TMP/no-such-dir/result.json"

# ---------------------------------------------------------------------------------------------
# decide

# docs/model.md §4.4: batch [5,15] against stored AFTER_PROCESSING [10,20]: not SAME (15 != 20),
# not NEW (5 <= 20), not CONTAINS (5 < 10), not OVER_LAPPING (15 <= 20), not ZERO (5 != 0),
# PREVIOUS with tolerateStateMismatch=false: throw State MISMATCH before any write.
run "$PIPESIM" decide --state AFTER_PROCESSING --stored 10,20 --batch 5,15
expect_rc "decide State MISMATCH" 0
WANT='{"state":"AFTER_PROCESSING","stored":[10,20],"batch":[5,15],"tolerateStateMismatch":false,"ops":[],"error":"AFTER_PROCESSING_STATE_MISMATCH"}'
if [ "$(cat "$OUT")" == "$WANT" ] && [ "$(wc -l <"$OUT")" -eq 1 ]; then
  pass "decide State MISMATCH: exact docs/model.md §9 line"
else
  fail "decide State MISMATCH: exact docs/model.md §9 line" "want: $WANT" "got:  $(cat "$OUT")"
fi

# The same with tolerateStateMismatch: skipped with a log line only, no op (keep_state is
# for SAME/CONTAINS, which report the stored range; models/sink/DECISION_NOTES.md #3), no error.
run "$PIPESIM" decide --state AFTER_PROCESSING --stored 10,20 --batch 5,15 --tolerate-state-mismatch
WANT='{"state":"AFTER_PROCESSING","stored":[10,20],"batch":[5,15],"tolerateStateMismatch":true,"ops":[],"error":null}'
if [ "$RC" -eq 0 ] && [ "$(cat "$OUT")" == "$WANT" ]; then
  pass "decide tolerated State MISMATCH: skip"
else
  fail "decide tolerated State MISMATCH: skip" "want: $WANT" "got:  $(cat "$OUT")"
fi

# NEW after AFTER_PROCESSING [10,20]: batch [21,30] -> BEFORE[21,30], insert, AFTER[21,30].
run "$PIPESIM" decide --state AFTER_PROCESSING --stored 10,20 --batch 21,30
WANT='{"state":"AFTER_PROCESSING","stored":[10,20],"batch":[21,30],"tolerateStateMismatch":false,"ops":[{"op":"set_state","state":"BEFORE_PROCESSING","range":[21,30]},{"op":"insert","records":[21,30],"count":10,"token":[21,30]},{"op":"set_state","state":"AFTER_PROCESSING","range":[21,30]}],"error":null}'
if [ "$RC" -eq 0 ] && [ "$(cat "$OUT")" == "$WANT" ]; then
  pass "decide NEW after AFTER_PROCESSING"
else
  fail "decide NEW after AFTER_PROCESSING" "want: $WANT" "got:  $(cat "$OUT")"
fi

run "$PIPESIM" decide --state AFTER_PROCESSING --stored 10 --batch 5,15
expect_bad "decide --stored without a comma" '--stored expects MIN,MAX'

run "$PIPESIM" decide --state SOMETIMES --stored 10,20 --batch 5,15
expect_bad "decide unknown state" 'unknown state "SOMETIMES"'

LINE1='{"state":"AFTER_PROCESSING","stored":[10,20],"batch":[5,15],"tolerateStateMismatch":false}'
LINE3='{"state":"NONE","batch":[0,9]}'
run_stdin "$LINE1"$'\n''{"state":"AFTER_PROCESSING","stored":[10,20]'$'\n'"$LINE3"$'\n' \
  "$PIPESIM" decide --cases -
expect_rc "decide --cases - with a bad line 2" 2
if grep -qF 'line 2' "$ERR"; then
  pass "decide --cases -: stderr names line 2"
else
  fail "decide --cases -: stderr names line 2" "$(show)"
fi
if [ "$(wc -l <"$OUT")" -eq 1 ] && [ "$(head -n 1 "$OUT")" == '{"state":"AFTER_PROCESSING","stored":[10,20],"batch":[5,15],"tolerateStateMismatch":false,"ops":[],"error":"AFTER_PROCESSING_STATE_MISMATCH"}' ]; then
  pass "decide --cases -: only the answer to line 1 on stdout"
else
  fail "decide --cases -: only the answer to line 1 on stdout" "$(show)"
fi

run_stdin "$LINE1"$'\n'"$LINE3"$'\n' "$PIPESIM" decide --cases -
if [ "$RC" -eq 0 ] && [ "$(wc -l <"$OUT")" -eq 2 ] &&
   [ "$(sed -n 2p "$OUT")" == '{"state":"NONE","stored":null,"batch":[0,9],"tolerateStateMismatch":false,"ops":[{"op":"set_state","state":"BEFORE_PROCESSING","range":[0,9]},{"op":"insert","records":[0,9],"count":10,"token":[0,9]},{"op":"set_state","state":"AFTER_PROCESSING","range":[0,9]}],"error":null}' ]; then
  pass "decide --cases -: two good lines, two answers"
else
  fail "decide --cases -: two good lines, two answers" "$(show)"
fi

printf '%s\n' "$LINE1" "$LINE1" >"$TMP/cases.jsonl"
run "$PIPESIM" decide --cases "$TMP/cases.jsonl"
if [ "$RC" -eq 0 ] && [ "$(wc -l <"$OUT")" -eq 2 ]; then
  pass "decide --cases FILE"
else
  fail "decide --cases FILE" "$(show)"
fi

run "$PIPESIM" decide --cases "$TMP/cases.jsonl" --state NONE
expect_rc "decide --cases with --state" 2

run "$PIPESIM" decide --cases "$TMP/no-such-cases.jsonl"
expect_bad "decide --cases missing file" "cannot read $TMP/no-such-cases.jsonl"

# ---------------------------------------------------------------------------------------------
# compare, check, lint (docs/model.md §1 uses 1-3)

# Kept small: each record is its own put at 100 records/s and the crashes keep every stretch
# event by event (the sanitizer build runs this ~30x slower).
write slow_commit.json '{"workload":{"records_per_day":8640000,"profile":"constant"},"kafka":{"num.partitions":2},"connect":{"tasks.max":2,"offset.flush.interval.ms":120000},"faults":[{"kind":"worker_crash","at":"10m"},{"kind":"worker_crash","at":"25m"}],"run":{"duration":"40m","drain":"5m","seeds":3}}'
write fast_commit.json '{"workload":{"records_per_day":8640000,"profile":"constant"},"kafka":{"num.partitions":2},"connect":{"tasks.max":2,"offset.flush.interval.ms":10000},"faults":[{"kind":"worker_crash","at":"10m"},{"kind":"worker_crash","at":"25m"}],"run":{"duration":"40m","drain":"5m","seeds":3}}'
run "$PIPESIM" compare "$TMP/slow_commit.json" "$TMP/fast_commit.json" --format json
expect_rc "compare two configs" 0
if "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); m=d["metrics"]["duplicate_rows_per_window"]; assert m["verdict"]=="B is better (lower)", m; assert m["ci95"][1] < 0' "$OUT"; then
  pass "compare: committing every 10 s instead of 120 s is better on duplicates"
else
  fail "compare verdict" "$(show)"
fi
cp "$OUT" "$TMP/compare.json"
# Inserts are neither better nor worse; an undecided difference says how many seeds would likely
# decide it: ((1.96 + 0.84) x the paired differences' spread / their mean)^2, computed here apart.
json_check "compare: inserts_per_window is never better or worse; an undecided difference names the seeds to decide it" \
  "$TMP/compare.json" 'all(("better" not in m["verdict"] and "worse" not in m["verdict"]) for k, m in d["metrics"].items() if k == "inserts_per_window") and d["metrics"]["inserts_per_window"]["lower_is_better"] is False and d["metrics"]["duplicate_rows_per_window"]["lower_is_better"] is True and not any(k.endswith("_per_day") for k in d["metrics"]) and all(("seeds_to_decide" in m) == (m["verdict"].startswith("indistinguishable (~")) for m in d["metrics"].values())'
json_check "compare JSON: each side says what ran (file, digest, duration, drain, effective config, ignored)" \
  "$TMP/compare.json" 'list(d) == ["pipesim_version", "a", "b", "seeds", "metrics"] and list(d["a"]) == ["file", "config_digest", "duration", "drain", "config", "ignored"] and d["a"]["file"].endswith("slow_commit.json") and d["a"]["config"]["connect"]["offset.flush.interval.ms"] == 120000 and d["b"]["config"]["connect"]["offset.flush.interval.ms"] == 10000 and d["a"]["config"]["connector"]["exactlyOnce"] is False and d["a"]["duration"] == "40m" and d["b"]["drain"] == "5m"'
run "$PIPESIM" compare "$TMP/slow_commit.json" "$TMP/slow_commit.json" --format json
if "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); assert all(m["verdict"]=="identical" for m in d["metrics"].values())' "$OUT"; then
  pass "compare: a config against itself is identical on every metric"
else
  fail "compare A A" "$(show)"
fi
# --seeds auto keeps to --max-seeds, whatever its value; windows of different lengths do not compare.
run "$PIPESIM" compare "$TMP/slow_commit.json" "$TMP/fast_commit.json" --seeds auto --max-seeds 4 --format json
json_check "compare --seeds auto honours --max-seeds" "$OUT" \
  'd["seeds"]["count"] == 4 and d["seeds"]["auto"]["max_seeds"] == 4 and d["seeds"]["auto"]["undecided"] == sum(m["verdict"].startswith("indistinguishable (~") for m in d["metrics"].values())'
run "$PIPESIM" compare "$TMP/slow_commit.json" "$TMP/fast_commit.json" --set run.duration=50m --seeds 1
expect_rc "compare: both windows 50m" 0
run "$PIPESIM" compare "$TMP/slow_commit.json" "$CFG" --seeds 1
expect_bad "compare: a 40-minute window against a 10-minute one" 'A and B cover different windows (A run.duration 40m from run.start 0s, B run.duration 10m from run.start 0s): a window shorter than whole days is compared per window, so both need the same window, or both whole days'

# Three all-zero seeds bound the lost records at 2.996 / 3 per 40-minute run (the exact Poisson
# bound, one-sided 95%): below 1.5, not below 0. A 40-minute run has figures per window, not per day.
write pass.json '{"expect":[{"metric":"lost_records_per_window","max":1.5},{"metric":"records_produced","min":100000}]}'
write zero.json '{"expect":[{"metric":"lost_records_per_window","max":0}]}'
write fail.json '{"expect":[{"metric":"duplicate_rows_per_window","max":0,"confidence":0.9}]}'
write perday.json '{"expect":[{"metric":"lost_records_per_day","max":0}]}'
write badexpect.json '{"expect":[{"metric":"duplicate_rows_per_dya","max":0}]}'
run "$PIPESIM" check "$TMP/slow_commit.json" --expect "$TMP/pass.json"
expect_rc "check: expectations that hold" 0
grep -q '^PASS  lost_records_per_window <= 1.5 at 95% confidence' "$OUT" && pass "check prints PASS lines" || fail "check PASS line" "$(show)"
run "$PIPESIM" check "$TMP/slow_commit.json" --expect "$TMP/pass.json" --format json
expect_rc "check --format json: expectations that hold" 0
json_check "check JSON: what ran, then each expectation with its bound and verdict" "$OUT" \
  'list(d)[:5] == ["pipesim_version", "config_digest", "seeds", "passed", "expectations"] and d["passed"] is True and d["seeds"] == {"first": 1, "count": 3} and [(e["metric"], e["verdict"], e.get("max"), e.get("min")) for e in d["expectations"]] == [("lost_records_per_window", "PASS", 1.5, None), ("records_produced", "PASS", None, 100000)] and d["config"]["connect"]["offset.flush.interval.ms"] == 120000 and d["duration"] == "40m" and d["ignored"] == [] and d["expect_file"].endswith("pass.json")'
run "$PIPESIM" check "$TMP/slow_commit.json" --expect "$TMP/fail.json"
expect_rc "check: an expectation that fails" 1
grep -q '^FAIL  duplicate_rows_per_window <= 0 at 90% confidence: estimate' "$OUT" && pass "check names the failing expectation" || fail "check FAIL line" "$(show)"
run "$PIPESIM" check "$TMP/slow_commit.json" --expect "$TMP/badexpect.json"
expect_bad "check: unknown metric" 'expectation error at expect[0].metric: unknown metric "duplicate_rows_per_dya"; did you mean "duplicate_rows_per_day"?'
run "$PIPESIM" check "$TMP/slow_commit.json" --expect "$TMP/perday.json"
expect_bad "check: a per-day expectation on a 40-minute run" 'expectation error at expect[0].metric: lost_records_per_day needs whole days: run.duration is 40m, and a window'"'"'s figure scaled to a day is not the day'"'"'s (the traffic profile is not flat); use lost_records_per_window, or a run.duration of whole days'
run "$PIPESIM" check "$TMP/slow_commit.json" --expect "$TMP/pass.json" --seeds many
expect_bad "check: bad --seeds" '--seeds expects a positive number or "auto", found "many"'
if [ -n "$SRC" ]; then
  # No loss in 3 seeds does not show a loss on at most 5% of days: that takes ~60 clean seeds.
  run "$PIPESIM" check "$TMP/slow_commit.json" --expect "$SRC/configs/checks/no_silent_loss.json" --seeds 3
  expect_rc "check with configs/checks/no_silent_loss.json on 3 seeds" 1
  grep -q '^UNDECIDED  lost_records_probability <= 0.05 at 95% confidence: estimate 0, one-sided 95% bounds \[0, 0.4' "$OUT" &&
    pass "no loss in 3 seeds is undecided, not a pass" || fail "no_silent_loss on 3 seeds" "$(show)"
fi
# All-zero counts do not prove a zero mean: the exact Poisson bound stays above 0.
run "$PIPESIM" check "$TMP/slow_commit.json" --expect "$TMP/zero.json"
expect_rc "check: all-zero counts against a limit of 0" 1
grep -q '^UNDECIDED  lost_records_per_window <= 0 at 95% confidence: estimate 0, one-sided 95% bounds \[0, 0.99' "$OUT" &&
  pass "all-zero counts: undecided with the Poisson bound" || fail "all-zero counts" "$(show)"
# One seed gives no interval, however far inside the limit.
run "$PIPESIM" check "$TMP/slow_commit.json" --expect "$TMP/pass.json" --seeds 1
expect_rc "check on one seed" 1
grep -q '^UNDECIDED  records_produced >= 100000 .*(one seed gives no interval: counts as a failure)' "$OUT" &&
  pass "one seed is never a pass" || fail "check on one seed" "$(show)"
# --seeds auto starts at 20 seeds, or at --max-seeds when that is lower.
run "$PIPESIM" check "$TMP/slow_commit.json" --expect "$TMP/zero.json" --seeds auto --max-seeds 5 --format json
json_check "check --seeds auto honours --max-seeds" "$OUT" 'd["seeds"]["count"] == 5 and d["expectations"][0]["verdict"] == "UNDECIDED"'


write rest_connector.json '{"name":"ch","config":{"connector.class":"com.clickhouse.kafka.connect.ClickHouseSinkConnector","exactlyOnce":"true","errors.tolerance":"all","tasks.max":"8"}}'
printf 'acks=1\nenable.idempotence=false\n# a comment\n' >"$TMP/producer.properties"
run "$PIPESIM" lint "$TMP/rest_connector.json" --producer-properties "$TMP/producer.properties" --format json --quick-seeds 2 --effect-seeds 1
expect_rc "lint: findings exit 1" 1
# errors.tolerance=all: a replay's State MISMATCH is reported, not a stop (v1.3.9 Utils.handleException).
if "$PY" -c 'import json,sys; ids={f["id"] for f in json.load(open(sys.argv[1]))}; need={"exactly_once_errors_reported","silent_drop","acks_not_all"}; assert need <= ids and "exactly_once_without_tolerance" not in ids, ids' "$OUT"; then
  pass "lint: REST connector + producer.properties findings"
else
  fail "lint findings" "$(show)"
fi
if "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); f={x["id"]: x for x in d}; assert f["acks_not_all"]["closed_by"] == ["producer.acks=all"]; assert f["acks_not_all"]["effect"].startswith("lost_records_by_cause.kafka_truncated "); assert all(isinstance(x["closed_by"], list) for x in d)' "$OUT"; then
  pass "lint: each finding names the settings that close it and the paired effect of closing it"
else
  fail "lint: closed_by and effect" "$(show)"
fi
# lint agrees with run: the DLQ lab's tasks never stop, and lint does not say they do.
if [ -n "$SRC" ]; then
  run "$PIPESIM" lint "$SRC/configs/lab/crash_exactly_once_dlq.json" --format json --quick-seeds 1 --effect-seeds 0
  lint_out=$(cat "$OUT")
  run "$PIPESIM" run "$SRC/configs/lab/crash_exactly_once_dlq.json" --seeds 2 --format json
  if "$PY" -c 'import json,sys; ids={f["id"] for f in json.loads(sys.argv[1])}; r=json.load(open(sys.argv[2])); assert "exactly_once_without_tolerance" not in ids and "exactly_once_errors_reported" in ids; assert r["metrics"]["task_failures"]["mean"] == 0' "$lint_out" "$OUT"; then
    pass "lint and run agree on the DLQ lab: reported, no task stops"
  else
    fail "lint and run agree on the DLQ lab" "$lint_out" "$(show)"
  fi
fi
# On a terminal lint says what it is doing (script(1) gives it one).
if command -v script >/dev/null; then
  script -qc "'$PIPESIM' lint '$CFG' --quick-seeds 1 --effect-seeds 0" /dev/null </dev/null | tr '\r' '\n' >"$TMP/lint_tty.txt"
  grep -q "^pipesim lint: quick simulation: 1 seed x 1 h at the peak hour's rate, with worker crashes" "$TMP/lint_tty.txt" &&
    grep -q '^pipesim lint: done ' "$TMP/lint_tty.txt" && pass "lint on a terminal: a progress line says what it does" ||
    fail "lint progress line" "$(cat "$TMP/lint_tty.txt")"
fi
write clean.json '{"connector":{"exactlyOnce":true,"tolerateStateMismatch":true},"producer":{"max.in.flight.requests.per.connection":1},"app":{"on_send_failure":"retry_table","resend_policy":"check_by_key"},"kafka":{"min.insync.replicas":2},"clickhouse":{"replicated_deduplication_window":100000}}'
run "$PIPESIM" lint "$TMP/clean.json" --quick-seeds 2 --effect-seeds 1
expect_rc "lint: a clean config exits 0" 0
run "$PIPESIM" lint "$TMP/badexpect.json"
expect_rc "lint: bad input exits 2" 2

# ---------------------------------------------------------------------------------------------
# Bad input: one check per row of the README's bad-input table, exit code and exact message.

# bad_exact NAME EXPECTED_STDERR CMD...: exit 2, nothing on stdout, stderr exactly EXPECTED_STDERR.
bad_exact() {
  local name=$1 want=$2
  shift 2
  run "$@"
  if [ "$RC" -eq 2 ] && [ ! -s "$OUT" ] && [ "$(cat "$ERR")" == "$want" ]; then
    pass "bad input, $name: exit 2, exact message"
  else
    fail "bad input, $name: exit 2, exact message" "want: $want" "$(show)"
  fi
}
USAGE=$'\n'"(run 'pipesim --help' for usage)"

bad_exact "malformed JSON" \
  "pipesim: config error: $TMP/malformed.json: malformed JSON at line 2, column 22: syntax error while parsing object key - unexpected '}'; expected string literal" \
  "$PIPESIM" validate "$TMP/malformed.json"
write huge.json '{"run": {"seeds": 1e400}}'
bad_exact "number beyond double range" "pipesim: config error: $TMP/huge.json: number overflow parsing '1e400'" \
  "$PIPESIM" validate "$TMP/huge.json"
"$PY" -c 'print("[" * 100000 + "]" * 100000)' >"$TMP/deep.json"
bad_exact "JSON nested too deep" "pipesim: config error: $TMP/deep.json: JSON nested deeper than 64 levels" \
  "$PIPESIM" validate "$TMP/deep.json"
write array.json '[1, 2]'
bad_exact "top level not an object" "pipesim: $TMP/array.json: config error at (top level): expected an object with sections, found [1,2]" \
  "$PIPESIM" validate "$TMP/array.json"
write null.json 'null'
bad_exact "a config file holding null" "pipesim: $TMP/null.json: config error at (top level): expected an object with sections, found null" \
  "$PIPESIM" validate "$TMP/null.json"
printf '{"run": {}}\n\0{"run": {"seeds": 0}}' >"$TMP/nul.json"
bad_exact "a NUL byte in a config file" "pipesim: config error: $TMP/nul.json: malformed JSON at line 2: a NUL byte (a JSON text has none)" \
  "$PIPESIM" validate "$TMP/nul.json"
write sweep_grid_ok.json '{"connect.max.poll.records": [100, 200]}'
bad_exact "sweep: a config that is not an object names its file" "pipesim: $TMP/array.json: config error at (top level): expected an object with sections, found [1,2]" \
  "$PIPESIM" sweep "$TMP/array.json" --grid "$TMP/sweep_grid_ok.json" --out "$TMP/never_sweep"
write section.json '{"run": 5}'
bad_exact "section not an object" "pipesim: $TMP/section.json: config error at run: expected an object, found 5" \
  "$PIPESIM" validate "$TMP/section.json"
write choice.json '{"connector": {"errors.tolerance": "some"}}'
bad_exact "not one of the choices" \
  "pipesim: $TMP/choice.json: "'config error at connector.errors.tolerance: expected one of "none" "all", found "some"' \
  "$PIPESIM" validate "$TMP/choice.json"
write rf.json '{"kafka": {"brokers": 1, "replication.factor": 3}}'
bad_exact "replication.factor above brokers" \
  "pipesim: $TMP/rf.json: "'config error at kafka.replication.factor: expected at most kafka.brokers (1), found 3' \
  "$PIPESIM" validate "$TMP/rf.json"
write both.json '{"faults": [{"kind": "worker_crash", "at": "1h", "rate_per_day": 2}]}'
bad_exact "fault with both at and rate_per_day" \
  "pipesim: $TMP/both.json: "'config error at faults[0]: a fault needs exactly one of "at" (scheduled) or "rate_per_day" (Poisson)' \
  "$PIPESIM" validate "$TMP/both.json"
bad_exact "missing config file" "pipesim: config error: cannot read $TMP/does-not-exist.json: No such file or directory" \
  "$PIPESIM" validate "$TMP/does-not-exist.json"
bad_exact "config file is a directory" "pipesim: config error: cannot read $TMP/outdir: Is a directory" \
  "$PIPESIM" validate "$TMP/outdir"
bad_exact "--set without =" 'pipesim: bad --set "connect.max.poll.records": expected section.key=value' \
  "$PIPESIM" validate --set connect.max.poll.records
bad_exact "--set of an unknown section" 'pipesim: bad --set "conect.tasks.max=4": unknown section "conect"; did you mean "connect"?' \
  "$PIPESIM" validate --set conect.tasks.max=4
bad_exact "--set of a bad value" 'pipesim: --set connect.max.poll.records=0: config error at connect.max.poll.records: expected an integer from 1 to 2147483647, found 0' \
  "$PIPESIM" validate --set connect.max.poll.records=0
bad_exact "--set of a key inside faults" \
  'pipesim: bad --set "faults.kind=worker_crash": "faults" is a list: set it whole, e.g. --set '"'"'faults=[{"kind": "worker_crash", "at": "1h"}]'"'" \
  "$PIPESIM" validate --set faults.kind=worker_crash
bad_exact "--set that is not UTF-8" 'pipesim: bad --set: not valid UTF-8' \
  "$PIPESIM" validate --set $'connector.name=\x8c'
bad_exact "--set on a file that is not an object" \
  "pipesim: $TMP/array.json: "'config error at (top level): expected an object with sections, found [1,2]' \
  "$PIPESIM" validate "$TMP/array.json" --set run.seeds=3

write bad_duration.json '{"run": {"duration": "2 hours"}}'
bad_exact "a config error in compare B names B's file" \
  "pipesim: B: $TMP/bad_duration.json: config error at run.duration: expected a duration such as \"30s\" or \"1h30m\" (units d, h, m, s, ms, us) from 1s to 3650d, found \"2 hours\"" \
  "$PIPESIM" compare "$CFG" "$TMP/bad_duration.json"
bad_exact "trace --from later than --to" 'pipesim: --from 2h is later than --to 1h' \
  "$PIPESIM" trace --seed 1 --from 2h --to 1h --out "$TMP/t.json"
bad_exact "trace --from after the run's end" "pipesim: --from 3d is after the run's end (1470m: run.duration + run.drain)" \
  "$PIPESIM" trace --seed 1 --from 3d --out "$TMP/t.json"
bad_exact "explain --seed out of run's range" "pipesim: --seed: Value -1 not in range 0 to 9007199254740991$USAGE" \
  "$PIPESIM" explain --seed -1
bad_exact "run --seed: the same range and message as explain's" "pipesim: --seed: Value -1 not in range 0 to 9007199254740991$USAGE" \
  "$PIPESIM" run --seed -1
bad_exact "trace --out not writable, before simulating" "pipesim: cannot write $TMP/missing-dir/t.json: No such file or directory" \
  "$PIPESIM" trace --seed 1 --out "$TMP/missing-dir/t.json"
# pipesim help [SUBCOMMAND]; --help shows defaults, not sentinels; a config named - is stdin.
run "$PIPESIM" help run
if [ "$RC" -eq 0 ] && grep -q '^Usage: run \[OPTIONS\] \[config\]' "$OUT" && grep -q -- '--format TEXT:{table,json,csv}=table' "$OUT" &&
   grep -q -- '--seeds INT:INT in \[1 - 100000000\] Excludes: --seed$' "$OUT" && ! grep -q -- '=-1\|=0$\|=\[\]' "$OUT" &&
   grep -q -- '--seed UINT:UINT in \[0 - 9007199254740991\] Excludes: --seeds$' "$OUT"; then
  pass "help run: the subcommand's options with their defaults, no sentinels, --seed a UINT as in explain"
else
  fail "help run" "$(show)"
fi
run "$PIPESIM" help report
grep -q -- '--no-stories  ' "$OUT" && ! grep -q '{false}' "$OUT" && grep -q -- '--out TEXT REQUIRED' "$OUT" &&
  pass "help report: --no-stories plain, --out REQUIRED" || fail "help report" "$(show)"
run "$PIPESIM" help
grep -q '^Subcommands:' "$OUT" && grep -q 'pipesim help SUBCOMMAND' "$OUT" && pass "help: the program's help" || fail "help" "$(show)"
bad_exact "help of an unknown subcommand" 'pipesim: help expects at most one subcommand (run, validate, decide, compare, check, lint, explain, trace, sweep, merge, shrink or report), found "nope"' \
  "$PIPESIM" help nope
run_stdin "$(cat "$CFG")" "$PIPESIM" run - --seeds 1 --format json
json_check "run -: the config from standard input" "$OUT" 'd["duration"] == "10m" and d["config"]["kafka"]["num.partitions"] == 2'
bad_exact "compare - -" 'pipesim: A and B cannot both be - (standard input holds one config)' "$PIPESIM" compare - -
# --out naming an input: refused before any work, the input left as it was (another spelling too).
cp "$CFG" "$TMP/own.json"
bad_exact "run --out its own config" "pipesim: --out $TMP/own.json is the config $TMP/own.json: pipesim never overwrites one of its inputs; write elsewhere" \
  "$PIPESIM" run "$TMP/own.json" --seeds 1 --format json --out "$TMP/own.json"
bad_exact "trace --out its own config, spelt otherwise" "pipesim: --out $TMP/./own.json is the config $TMP/own.json: pipesim never overwrites one of its inputs; write elsewhere" \
  "$PIPESIM" trace "$TMP/own.json" --seed 1 --out "$TMP/./own.json"
write own.properties 'acks=all'
bad_exact "shrink --out its producer properties" "pipesim: --out $TMP/own.properties is the producer properties $TMP/own.properties: pipesim never overwrites one of its inputs; write elsewhere" \
  "$PIPESIM" shrink "$TMP/own.json" --producer-properties "$TMP/own.properties" --seed 1 --until "duplicate_rows >= 0" --out "$TMP/own.properties"
bad_exact "compare --out its config B" "pipesim: --out $TMP/own.json is the config $TMP/own.json: pipesim never overwrites one of its inputs; write elsewhere" \
  "$PIPESIM" compare "$CFG" "$TMP/own.json" --seeds 1 --out "$TMP/own.json"
write own_expect.json '{"expect":[{"metric":"lost_records","max":1e18}]}'
bad_exact "check --out its expectations" "pipesim: --out $TMP/own_expect.json is the expectations $TMP/own_expect.json: pipesim never overwrites one of its inputs; write elsewhere" \
  "$PIPESIM" check "$TMP/own.json" --seeds 1 --expect "$TMP/own_expect.json" --out "$TMP/own_expect.json"
printf '%s\n' '{"state":"NONE","stored":null,"batch":[0,9]}' >"$TMP/own_cases.jsonl"
bad_exact "decide --out its cases file" "pipesim: --out $TMP/own_cases.jsonl is the cases file $TMP/own_cases.jsonl: pipesim never overwrites one of its inputs; write elsewhere" \
  "$PIPESIM" decide --cases "$TMP/own_cases.jsonl" --out "$TMP/own_cases.jsonl"
bad_exact "validate --print --out its config" "pipesim: --out $TMP/own.json is the config $TMP/own.json: pipesim never overwrites one of its inputs; write elsewhere" \
  "$PIPESIM" validate "$TMP/own.json" --print --out "$TMP/own.json"
cmp -s "$CFG" "$TMP/own.json" && [ "$(cat "$TMP/own.properties")" == "acks=all" ] &&
  pass "--out naming an input leaves the input as it was" || fail "--out naming an input changed it"
# --out on every subcommand that prints a result: the file holds what stdout would, stdout empty.
for cmd in "explain --seed 1" "lint --format json --quick-seeds 1 --effect-seeds 0" "compare $CFG --seeds 1" "check --seeds 1 --expect $TMP/own_expect.json"; do
  # shellcheck disable=SC2086
  run "$PIPESIM" ${cmd%% *} "$CFG" ${cmd#* }
  cp "$OUT" "$TMP/printed.txt"
  WANT_RC=$RC
  # shellcheck disable=SC2086
  run "$PIPESIM" ${cmd%% *} "$CFG" ${cmd#* } --out "$TMP/written.txt"
  if [ "$RC" -eq "$WANT_RC" ] && [ ! -s "$OUT" ] && cmp -s "$TMP/printed.txt" "$TMP/written.txt"; then
    pass "${cmd%% *} --out: the file holds what it prints"
  else
    fail "${cmd%% *} --out: the file holds what it prints" "$(show)"
  fi
done
# The same for validate (--print too) and decide (one case, a cases file), which take no config or another one.
for cmd in "validate $CFG" "validate $CFG --print" "decide --cases $TMP/own_cases.jsonl" \
           "decide --state AFTER_PROCESSING --stored 10,20 --batch 5,15 --explain"; do
  # shellcheck disable=SC2086
  run "$PIPESIM" $cmd
  cp "$OUT" "$TMP/printed.txt"
  # shellcheck disable=SC2086
  run "$PIPESIM" $cmd --out "$TMP/written.txt"
  if [ "$RC" -eq 0 ] && [ ! -s "$OUT" ] && [ -s "$TMP/printed.txt" ] && cmp -s "$TMP/printed.txt" "$TMP/written.txt"; then
    pass "${cmd%% --*} --out: the file holds what it prints"
  else
    fail "${cmd%% --*} --out: the file holds what it prints" "$(show)"
  fi
done
# A sweep's manifest given as a config to any command: said what it is.
mkdir -p "$TMP/sw_manifest"
write sw_manifest/sweep.json '{"version": 1, "grid": {"connect.max.poll.records": [200]}, "points": 1, "base_config": {}}'
bad_exact "run on a sweep's manifest" "pipesim: $TMP/sw_manifest/sweep.json is a sweep's manifest (pipesim sweep --out DIR writes DIR/sweep.json), not a config: finish that sweep with pipesim sweep CONFIG --grid GRID --out DIR --resume, or sweep its base_config (a config) with its grid" \
  "$PIPESIM" run "$TMP/sw_manifest/sweep.json" --seeds 1
bad_exact "compare --seeds 0" 'pipesim: --seeds expects a positive number (at most 100000000) or "auto", found "0"' \
  "$PIPESIM" compare "$CFG" "$CFG" --seeds 0

printf '# the tasks\x27 consumer\nmax.poll.records=abc\n' >"$TMP/badvalue.properties"
bad_exact "a bad value in a properties file" \
  "pipesim: config error: $TMP/badvalue.properties: line 2: max.poll.records: expected an integer from 1 to 2147483647, found \"abc\"" \
  "$PIPESIM" validate --consumer-properties "$TMP/badvalue.properties"
printf 'max.pol.records=5\n' >"$TMP/typo.properties"
bad_exact "a key the real ConfigDef does not define" \
  "pipesim: config error: $TMP/typo.properties: line 1: unknown key \"max.pol.records\" (not a key of Kafka 3.7's ConsumerConfig); did you mean \"max.poll.records\"?" \
  "$PIPESIM" validate --consumer-properties "$TMP/typo.properties"
printf 'max.poll.records=10\n' >"$TMP/plainconsumer.properties"
bad_exact "a consumer key in a worker's properties" \
  "pipesim: config error: $TMP/plainconsumer.properties: line 1: \"max.poll.records\" is a consumer key: a worker passes it to its tasks' consumers as \"consumer.max.poll.records\"" \
  "$PIPESIM" validate --worker-properties "$TMP/plainconsumer.properties"
write source.json '{"name": "s", "config": {}, "tasks": [], "type": "source"}'
bad_exact "a GET body of a source connector" \
  "pipesim: $TMP/source.json: "'config error at connector.type: expected "sink" (the ClickHouse sink connector), found "source"' \
  "$PIPESIM" validate "$TMP/source.json"
write clientversion.json '{"connector": {"clientVersion": "V2"}}'
bad_exact "a sink key the connector does not define" \
  "pipesim: $TMP/clientversion.json: "'config error at connector.clientVersion: unknown key; did you mean "client_version"?' \
  "$PIPESIM" validate "$TMP/clientversion.json"

write dupkey.json '{"run": {"seeds": 2, "seeds": 3}}'
bad_exact "a key given twice in one JSON object" \
  "pipesim: config error: $TMP/dupkey.json: duplicate key \"seeds\" at run.seeds (JSON keeps only the last: give it once)" \
  "$PIPESIM" validate "$TMP/dupkey.json"
write neverfires.json '{"faults": [{"kind": "worker_crash", "at": "25h"}]}'
bad_exact "a scheduled fault that would never fire" \
  "pipesim: $TMP/neverfires.json: config error at faults[0].at: expected a time before run.duration (1d): faults come while the workload runs, found \"25h\"" \
  "$PIPESIM" validate "$TMP/neverfires.json"
write several.json '{"run": {"seeds": 0, "bogus": 1}, "conect": {}}'
bad_exact "several errors in one file" \
  "pipesim: $TMP/several.json: config error at conect: unknown section; did you mean \"connect\"?
$TMP/several.json: config error at run.seeds: expected an integer from 1 to 100000000, found 0
$TMP/several.json: config error at run.bogus: unknown key" \
  "$PIPESIM" validate "$TMP/several.json"
bad_exact "decide --stored with state NONE" \
  'pipesim decide: --stored cannot be given with --state NONE (NONE: no state row, so no stored range)' \
  "$PIPESIM" decide --state NONE --batch 1,5 --stored 1,3

# decide: a bad case line stops the stream at that line.
bad_case() {  # bad_case NAME LINE EXACT_MESSAGE_AFTER_"line 1: "
  run_stdin "$2"$'\n' "$PIPESIM" decide --cases -
  if [ "$RC" -eq 2 ] && [ ! -s "$OUT" ] && [ "$(cat "$ERR")" == "pipesim decide: line 1: $3" ]; then
    pass "bad input, decide case line, $1: exit 2, exact message"
  else
    fail "bad input, decide case line, $1: exit 2, exact message" "want: pipesim decide: line 1: $3" "$(show)"
  fi
}
bad_case "malformed JSON" '{"state":"NONE","batch":[1,2]' \
  "malformed JSON at column 30: syntax error while parsing object - unexpected end of input; expected '}'"
bad_case "unknown key" '{"state":"NONE","batch":[1,2],"stord":[1,2]}' 'unknown key "stord" (did you mean "stored"?)'
bad_case "missing key" '{"state":"AFTER_PROCESSING","batch":[1,2]}' \
  'missing key "stored" (required when state is AFTER_PROCESSING)'
bad_case "unknown state" '{"state":"DONE","batch":[1,2]}' \
  'unknown state "DONE" (expected NONE, BEFORE_PROCESSING or AFTER_PROCESSING)'
bad_case "range min above max" '{"state":"NONE","batch":[5,2]}' '"batch": min 5 > max 2'
bad_case "negative offset" '{"state":"NONE","batch":[-1,2]}' '"batch": min -1 is negative (offsets start at 0)'
bad_case "number beyond double range" '{"state":"NONE","batch":[0,1e400]}' "number overflow parsing '1e400'"
bad_case "duplicate key" '{"state":"NONE","batch":[1,2],"batch":[3,4]}' 'duplicate key "batch"'
bad_exact "decide --cases of a directory" "pipesim decide: cannot read $TMP/outdir: Is a directory" \
  "$PIPESIM" decide --cases "$TMP/outdir"
bad_exact "decide --cases of a missing file" "pipesim decide: cannot read $TMP/no-such-cases.jsonl: No such file or directory" \
  "$PIPESIM" decide --cases "$TMP/no-such-cases.jsonl"
bad_exact "decide --batch without a comma" 'pipesim decide: --batch expects MIN,MAX (inclusive offsets), found "5"' \
  "$PIPESIM" decide --state NONE --batch 5
bad_exact "decide --state unknown" 'pipesim decide: --state: unknown state "X" (expected NONE, BEFORE_PROCESSING or AFTER_PROCESSING)' \
  "$PIPESIM" decide --state X --batch 1,2
bad_exact "decide --state with a stored row but no --stored" \
  'pipesim decide: --stored MIN,MAX is required with --state AFTER_PROCESSING (the range the state row holds)' \
  "$PIPESIM" decide --state AFTER_PROCESSING --batch 1,5
bad_exact "decide --batch min above max" 'pipesim decide: --batch: min 5 > max 2' \
  "$PIPESIM" decide --state NONE --batch 5,2
bad_exact "decide without a case" 'pipesim decide: give --cases FILE, or --state and --batch (and --stored)' \
  "$PIPESIM" decide

# Bad command lines (CLI11 messages, then the usage hint).
bad_exact "unknown subcommand" 'pipesim: unknown subcommand "frobnicate" (expected run, validate, decide, compare, check, lint, explain, trace, sweep, merge, shrink or report)'"$USAGE" \
  "$PIPESIM" frobnicate
bad_exact "no subcommand" "pipesim: A subcommand is required$USAGE" "$PIPESIM"
bad_exact "an unknown option before the subcommand" 'pipesim: unknown option "--seeds" (expected a subcommand: run, validate, decide, compare, check, lint, explain, trace, sweep, merge, shrink or report)'"$USAGE" \
  "$PIPESIM" --seeds 4 run
bad_exact "explain --max-groups -1" "pipesim: --max-groups: Value -1 not in range 0 to 1000000$USAGE" \
  "$PIPESIM" explain --seed 1 --max-groups -1
bad_exact "unknown flag" "pipesim: The following argument was not expected: --bogus-flag$USAGE" \
  "$PIPESIM" run "$CFG" --bogus-flag
bad_exact "bad --format" "pipesim: --format: xml not in {table,json,csv}$USAGE" "$PIPESIM" run "$CFG" --format xml
bad_exact "--seeds 0" "pipesim: --seeds: Value 0 not in range 1 to 100000000$USAGE" "$PIPESIM" run "$CFG" --seeds 0
bad_exact "--seed -1" "pipesim: --seed: Value -1 not in range 0 to 9007199254740991$USAGE" "$PIPESIM" run "$CFG" --seed -1
bad_exact "--threads 0" "pipesim: --threads: Value 0 not in range 1 to 1024$USAGE" "$PIPESIM" run "$CFG" --threads 0
bad_exact "--seed with --seeds" "pipesim: --seed excludes --seeds$USAGE" "$PIPESIM" run "$CFG" --seed 1 --seeds 2
bad_exact "--out into a missing directory" "pipesim: cannot write $TMP/no-such-dir/result.json: No such file or directory" \
  "$PIPESIM" run "$CFG" --seeds 1 --out "$TMP/no-such-dir/result.json"
bad_exact "--out naming a directory" "pipesim: cannot write $TMP/outdir: Is a directory" \
  "$PIPESIM" run "$CFG" --seeds 1 --out "$TMP/outdir"

if [ -w /dev/full ]; then
  "$PIPESIM" run "$CFG" --seeds 1 --format json >/dev/full 2>"$ERR" </dev/null
  RC=$?
  if [ "$RC" -eq 2 ] && [ "$(cat "$ERR")" == "pipesim: cannot write the result to standard output" ]; then
    pass "bad input, stdout not writable (/dev/full): exit 2, exact message"
  else
    fail "bad input, stdout not writable (/dev/full): exit 2, exact message" "rc=$RC" "stderr: $(cat "$ERR")"
  fi
fi

# ---------------------------------------------------------------------------------------------
# Interrupted runs: SIGINT/SIGTERM stop a long run; no result file, no temporary file, a
# clear message, exit 128 + signal.

# caught_mask PID: the process's mask of caught signals (SigCgt of /proc/PID/status) as a number.
caught_mask() {
  local hex
  hex=$(sed -n 's/^SigCgt:[[:space:]]*//p' "/proc/$1/status" 2>/dev/null)
  echo $((16#${hex:-0}))
}

# interrupt_check SIGNAL NAME EXIT_CODE LABEL MESSAGE -- COMMAND...: COMMAND (pipesim's
# arguments; "$TMP/intr" is its only output directory) stopped by SIGNAL exits EXIT_CODE with
# MESSAGE as its whole stderr, nothing on stdout, and nothing in $TMP/intr but what the
# command kept on purpose (a sweep's directory).
interrupt_check() {
  local sig=$1 name=$2 code=$3 label=$4 message=$5 pid i exe
  shift 6
  exe=$(readlink -f "$PIPESIM")
  rm -rf "$TMP/intr" && mkdir "$TMP/intr"
  "$PIPESIM" "$@" >"$OUT" 2>"$ERR" <"${INTERRUPT_STDIN:-/dev/null}" &
  pid=$!
  # Wait (up to 60 s) until the process is pipesim (not the forked shell before its exec,
  # whose own SIGINT/SIGTERM handlers would match too: a signal sent then was lost, and the
  # background pipesim, started with SIGINT ignored, ran on) and has installed its handlers
  # for both SIGINT (bit 1) and SIGTERM (bit 14).
  for ((i = 0; i < 600; i++)); do
    [ "$(readlink "/proc/$pid/exe" 2>/dev/null)" == "$exe" ] &&
      (((($(caught_mask "$pid") & 0x4002)) == 0x4002)) && break
    sleep 0.1
  done
  # INTERRUPT_AFTER=FILE: also wait (up to 60 s) until the command has written FILE (a sweep's
  # sweep.json: a signal before it finds no sweep to resume and says so instead).
  for ((i = 0; i < 600; i++)); do
    [ -z "${INTERRUPT_AFTER:-}" ] || [ -e "$INTERRUPT_AFTER" ] && break
    sleep 0.1
  done
  kill -s "$sig" "$pid"
  # A command that ignores the signal must fail the test, not hang it: 120 s, then kill -9.
  for ((i = 0; i < 1200; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null
  wait "$pid"
  RC=$?
  if [ "$RC" -eq "$code" ] && [ "$(cat "$ERR")" == "$message" ] && [ ! -s "$OUT" ]; then
    pass "$label interrupted by $name: exit $code, exact message"
  else
    fail "$label interrupted by $name: exit $code, exact message" "want: $message" "$(show)"
  fi
}
# 100,000 seeds of the baseline day, ten simulated years, hours of work: certain to be running
# when the signal comes.
LONG=(--set run.duration=3650d)
for sig in "INT SIGINT 130" "TERM SIGTERM 143"; do
  read -r s name code <<<"$sig"
  interrupt_check "$s" "$name" "$code" run "pipesim: interrupted ($name), no result written" -- \
    run --seeds 100000 --threads 2 --format json --out "$TMP/intr/result.json"
  if [ -z "$(ls -A "$TMP/intr")" ]; then
    pass "run interrupted by $name: no result file, no temporary file"
  else
    fail "run interrupted by $name: no result file, no temporary file" "$(ls -A "$TMP/intr")"
  fi
done
interrupt_check INT SIGINT 130 trace "pipesim trace: the run is 87600h30m long: timeline detail kept for 0s..1h only (the story is whole); choose the window with --from/--to, e.g. --from 1825d --to 43801h
pipesim: interrupted (SIGINT), no result written" -- trace --seed 1 "${LONG[@]}" --out "$TMP/intr/t.json"
[ -z "$(ls -A "$TMP/intr")" ] && pass "trace interrupted: no trace file" || fail "trace interrupted: no trace file" "$(ls -A "$TMP/intr")"
interrupt_check TERM SIGTERM 143 explain "pipesim: interrupted (SIGTERM), no result written" -- explain --seed 1 "${LONG[@]}"
# decide on a quiet standard input (a pipe whose writer sends nothing): the first signal stops it.
mkfifo "$TMP/quiet"
sleep 300 >"$TMP/quiet" &
quiet_writer=$!
INTERRUPT_STDIN=$TMP/quiet interrupt_check INT SIGINT 130 "decide --cases -" \
  "pipesim: interrupted (SIGINT), every answer above is complete" -- decide --cases -
kill "$quiet_writer" 2>/dev/null; wait "$quiet_writer" 2>/dev/null
interrupt_check INT SIGINT 130 compare "pipesim: interrupted (SIGINT), no result written" -- compare "$CFG" "$CFG" "${LONG[@]}" --seeds 2
interrupt_check INT SIGINT 130 check "pipesim: interrupted (SIGINT), no result written" -- check "$CFG" "${LONG[@]}" --seeds 2 --expect "$TMP/pass.json"
write sweep_grid.json '{"connect.offset.flush.interval.ms": [10000, 60000]}'
INTERRUPT_AFTER=$TMP/intr/sw/sweep.json interrupt_check TERM SIGTERM 143 sweep "pipesim: interrupted (SIGTERM), 0 of 2 points are in $TMP/intr/sw; finish with: pipesim sweep '$CFG' --grid '$TMP/sweep_grid.json' --set 'run.duration=3650d' --seeds 2 --out '$TMP/intr/sw' --resume" -- \
  sweep "$CFG" --grid "$TMP/sweep_grid.json" "${LONG[@]}" --seeds 2 --out "$TMP/intr/sw"
[ -f "$TMP/intr/sw/sweep.json" ] && pass "sweep interrupted: its directory stays for --resume" || fail "sweep interrupted: its directory stays for --resume" "$(ls -A "$TMP/intr")"

# ---------------------------------------------------------------------------------------------

# The commands pipesim prints for pasting are quoted for the shell (cli/shell_quote): a config
# path with a blank and a quote in it still replays through its extreme seed's explain command.
ODD="$TMP/odd dir/it's.json"
mkdir -p "$TMP/odd dir"
cp "$SRC/configs/lab/crash_after_insert_at_least_once.json" "$ODD"
run "$PIPESIM" run "$ODD" --seeds 2 --format json
EXPLAIN=$(/usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["extreme_seeds"][0]["explain"])' <"$OUT")
if [ "$RC" -eq 0 ] && [ -n "$EXPLAIN" ] && (PATH="$(dirname "$PIPESIM"):$PATH" bash -c "$EXPLAIN" >/dev/null 2>&1); then
  pass "an extreme seed's explain command with an odd path replays in a shell"
else
  fail "an extreme seed's explain command with an odd path replays in a shell" "$EXPLAIN" "$(show)"
fi

finish
