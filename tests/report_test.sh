#!/usr/bin/env bash
# End-to-end checks of `pipesim report` (README "pipesim report"): a page of
# each kind of result (run --per-seed, with and without importance sampling;
# compare; a passing and a failing check; a sweep directory) opened in headless
# Chromium and checked by tools/report_check.py (every chart rendered, every
# number shown equals the result's); the checker itself fails on a planted
# wrong number; the page is the same bytes twice; bad input exits 2 and
# writes nothing.
#
# Run by ctest as: PIPESIM=<binary> PIPESIM_SOURCE_DIR=<repo root> bash tests/report_test.sh
set -u

PIPESIM=${PIPESIM:?set PIPESIM to the pipesim binary}
SRC=${PIPESIM_SOURCE_DIR:?set PIPESIM_SOURCE_DIR to the repository root}
PY=/usr/bin/python3
CHECK="$PY $SRC/tools/report_check.py"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/pipesim_report_test.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"

# report_and_check NAME RESULT [screenshot]: pipesim report RESULT, then the browser check
# (and, with "screenshot", a screenshot: one page's is enough to show that it renders to
# pixels; each Chromium start is a few seconds of CI's budget).
report_and_check() {
  run "$PIPESIM" report "$2" --out "$TMP/$1.html"
  expect_ok "report of $1"
  local shot=()
  [ "${3:-}" = screenshot ] && shot=(--screenshot "$TMP/$1.png")
  run $CHECK "$2" "$TMP/$1.html" "${shot[@]}"
  if [ "$RC" -eq 0 ]; then pass "$1: $(cat "$OUT")"; else fail "$1: browser check" "$(show)"; fi
  [ "${3:-}" = screenshot ] || return 0
  if [ "$(head -c 8 "$TMP/$1.png" | od -An -tx1 | tr -d ' ')" = "89504e470d0a1a0a" ] &&
     [ "$(stat -c %s "$TMP/$1.png")" -gt 20000 ]; then
    pass "$1: a screenshot ($(stat -c %s "$TMP/$1.png") bytes of PNG)"
  else
    fail "$1: a screenshot"
  fi
}

# The results: short runs with faults, so that the numbers are not all zero.
BASE="$SRC/configs/production.json"
run "$PIPESIM" run "$BASE" --seeds 6 --set run.duration=2h --per-seed --format json --out "$TMP/run.json"
expect_ok "run --per-seed"
report_and_check run "$TMP/run.json" screenshot
run "$PIPESIM" run "$SRC/configs/scenarios/rare_loss.json" --seeds 40 \
  --importance leader_change=20 --per-seed --format json --out "$TMP/importance.json"
expect_ok "run --importance --per-seed"
report_and_check importance "$TMP/importance.json"
if grep -q "Importance sampling: faults drawn at leader_change=20" "$TMP/importance.html"; then
  pass "importance: the page names the tilt"
else
  fail "importance: the page names the tilt"
fi
run "$PIPESIM" run "$BASE" --seeds 4 --set run.duration=1h --format json --out "$TMP/summary.json"
report_and_check summary "$TMP/summary.json"
if grep -q "run it with --per-seed" "$TMP/summary.html"; then pass "summary: says how to get distributions"
else fail "summary: says how to get distributions"; fi

run "$PIPESIM" compare "$BASE" "$SRC/configs/lab/crash_after_insert_at_least_once.json" --seeds 4 \
  --set run.duration=1h --format json
expect_ok "compare"
cp "$OUT" "$TMP/compare.json"
report_and_check compare "$TMP/compare.json"

# configs/checks/duplicates_budget.json bounds figures per day: its windows' counterpart for 1 h.
printf '{"expect": [{"metric": "duplicate_rows_per_window", "max": 20833},
 {"metric": "duplicate_rows_by_entry.insert_timeout_redelivery_per_window", "max": 42}]}' >"$TMP/budget_1h.json"
run "$PIPESIM" check "$BASE" --expect "$TMP/budget_1h.json" --seeds 4 \
  --set run.duration=1h --format json
expect_ok "check (passing)"
cp "$OUT" "$TMP/check_pass.json"
report_and_check check_pass "$TMP/check_pass.json"
printf '{"expect": [{"metric": "duplicate_rows_per_window", "max": 10}, {"metric": "lost_records_per_window", "max": 0},
 {"metric": "inserts_per_s", "min": 1000}]}' >"$TMP/strict.json"
run "$PIPESIM" check "$SRC/configs/lab/crash_after_insert_at_least_once.json" --expect "$TMP/strict.json" \
  --seeds 4 --format json
expect_rc "check (failing)" 1
cp "$OUT" "$TMP/check_fail.json"
report_and_check check_fail "$TMP/check_fail.json"
if grep -q "<title>pipesim check: FAIL" "$TMP/check_fail.html"; then pass "check_fail: the title says FAIL"
else fail "check_fail: the title says FAIL"; fi

cat >"$TMP/grid.json" <<'JSON'
{"workload": {"records_per_day": 50000000, "profile": "constant"},
 "faults": [{"kind": "worker_crash", "rate_per_day": 48},
            {"kind": "insert_timeout", "rate_per_day": 48, "duration": "40s", "server_commits": 1.0}],
 "run": {"duration": "30m", "drain": "10m", "seeds": 2},
 "sweep": {"connector.exactlyOnce": [false, true], "workload.records_per_day": [20000000, 50000000]}}
JSON
run "$PIPESIM" sweep "$TMP/grid.json" --out "$TMP/sweep"
expect_ok "sweep"
report_and_check sweep "$TMP/sweep"

# The checker is a real check: a number changed in a cell, or in a chart's data, fails it.
"$PY" - "$TMP/run.html" "$TMP/planted_cell.html" "$TMP/planted_chart.html" <<'PYEOF'
import re, sys
page = open(sys.argv[1]).read()
cell = re.sub(r'(<td data-src="/estimates/duplicate_rows_per_window/value">)([^<]*)<',
              lambda m: m.group(1) + str(int(float(m.group(2))) + 7) + "<", page, count=1)
assert cell != page
open(sys.argv[2], "w").write(cell)
chart = re.sub(r'("values":\[)([-0-9.e+]+)', lambda m: m.group(1) + str(float(m.group(2)) + 3), page, count=1)
assert chart != page
open(sys.argv[3], "w").write(chart)
PYEOF
for planted in planted_cell planted_chart; do
  run $CHECK "$TMP/run.json" "$TMP/$planted.html"
  if [ "$RC" -eq 1 ] && grep -q "the result has" "$ERR"; then pass "$planted: the checker finds it"
  else fail "$planted: the checker finds it" "$(show)"; fi
done
# ... and so is its layout check: a line that does not wrap, wider than the page's column, fails it.
"$PY" - "$TMP/run.html" "$TMP/planted_wide.html" <<'PYEOF'
import sys
page = open(sys.argv[1]).read()
wide = page.replace("</header>", '</header><pre style="white-space: pre">' + "x" * 400 + "</pre>", 1)
assert wide != page
open(sys.argv[2], "w").write(wide)
PYEOF
run $CHECK "$TMP/run.json" "$TMP/planted_wide.html"
if [ "$RC" -eq 1 ] && grep -q "wider than the page's column" "$ERR"; then pass "planted_wide: the checker finds it"
else fail "planted_wide: the checker finds it" "$(show)"; fi

# The pages' reproduce recipes: the config a page shows (its last <pre>), run again as the page
# says, gives the same estimates (run) and the same points (sweep).
page_config() {  # page_config PAGE OUT.json [N]: the page's N-th <pre> from the end (default 1)
  "$PY" -c 'import html, re, sys
pre = re.findall(r"<pre>(.*?)</pre>", open(sys.argv[1]).read(), re.S)[-int(sys.argv[3])]
open(sys.argv[2], "w").write(html.unescape(pre))' "$1" "$2" "${3:-1}"
}
page_config "$TMP/run.html" "$TMP/effective.json"
run "$PIPESIM" run "$TMP/effective.json" --seeds 6 --per-seed --format json --out "$TMP/again.json"
if [ "$RC" -eq 0 ] && "$PY" -c 'import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
sys.exit(0 if a["estimates"] == b["estimates"] and a["config_digest"] == b["config_digest"] else 1)' \
  "$TMP/run.json" "$TMP/again.json" && grep -q "pipesim run config.json --seeds 6 --per-seed" "$TMP/run.html"; then
  pass "run: the reproduce recipe gives the same estimates"
else
  fail "run: the reproduce recipe gives the same estimates" "$(show)"
fi
page_config "$TMP/sweep.html" "$TMP/sweep_again.json"
run "$PIPESIM" sweep "$TMP/sweep_again.json" --seeds 2 --out "$TMP/sweep_again"
if [ "$RC" -eq 0 ] && grep -q "pipesim sweep grid_config.json --seeds 2 --out sweep" "$TMP/sweep.html" &&
   "$PY" -c 'import json, sys
a, b = ([json.loads(l) for l in open(f + "/points.jsonl")] for f in sys.argv[1:])
sys.exit(0 if [(p["params"], p["metrics"]) for p in a] == [(p["params"], p["metrics"]) for p in b] else 1)' \
  "$TMP/sweep" "$TMP/sweep_again"; then
  pass "sweep: the reproduce recipe gives the same points"
else
  fail "sweep: the reproduce recipe gives the same points" "$(show)"
fi
page_config "$TMP/compare.html" "$TMP/a.json" 2
page_config "$TMP/compare.html" "$TMP/b.json" 1
run "$PIPESIM" compare "$TMP/a.json" "$TMP/b.json" --seeds 4 --format json
if [ "$RC" -eq 0 ] && grep -q "pipesim compare a.json b.json --seeds 4" "$TMP/compare.html" &&
   "$PY" -c 'import json, sys
sys.exit(0 if json.load(open(sys.argv[1]))["metrics"] == json.load(open(sys.argv[2]))["metrics"] else 1)' \
  "$TMP/compare.json" "$OUT"; then
  pass "compare: the reproduce recipe gives the same differences"
else
  fail "compare: the reproduce recipe gives the same differences" "$(show)"
fi
page_config "$TMP/check_fail.html" "$TMP/check_config.json"
run "$PIPESIM" check "$TMP/check_config.json" --expect "$TMP/strict.json" --seeds 4 --format json
if [ "$RC" -eq 1 ] && grep -q "pipesim check config.json --expect $TMP/strict.json --seeds 4" "$TMP/check_fail.html" &&
   "$PY" -c 'import json, sys
sys.exit(0 if json.load(open(sys.argv[1]))["expectations"] == json.load(open(sys.argv[2]))["expectations"] else 1)' \
  "$TMP/check_fail.json" "$OUT"; then
  pass "check: the reproduce recipe gives the same verdicts"
else
  fail "check: the reproduce recipe gives the same verdicts" "$(show)"
fi

# Same result, same bytes (the worst seeds' stories are simulated again).
run "$PIPESIM" report "$TMP/run.json" --out "$TMP/again.html"
if cmp -s "$TMP/run.html" "$TMP/again.html"; then pass "the same page twice"; else fail "the same page twice"; fi
if grep -q "most duplicate_rows: seed" "$TMP/run.html" && grep -q "^outcome: " "$TMP/run.html"; then
  pass "run: the worst seed's story is told"
else
  fail "run: the worst seed's story is told"
fi
# The story on the page is the one `pipesim explain` tells (its command is in the result).
"$PY" - "$TMP/run.json" "$TMP/run.html" "$PIPESIM" "$TMP/story_diff" <<'PYEOF2'
import html, json, re, shlex, subprocess, sys
result, page, pipesim, diff = sys.argv[1:]
worst = json.load(open(result))["extreme_seeds"][0]
argv = shlex.split(worst["explain"])
told = subprocess.run([pipesim] + argv[1:], capture_output=True, text=True, check=True).stdout
told = told.split("\n", 2)[2]  # after the header line and its blank line
told = told[:told.index("\noutcome: ")]
shown = html.unescape(re.search(r"<pre>(.*?)</pre>", open(page).read(), re.S).group(1))
shown = shown[:shown.index("\noutcome: ")]
open(diff, "w").write("explain:\n" + told + "\npage:\n" + shown)
sys.exit(0 if told == shown and told.strip() else 1)
PYEOF2
if [ $? -eq 0 ]; then pass "run: the page's story is pipesim explain's"; else fail "run: the page's story is pipesim explain's" "$(head -c 800 "$TMP/story_diff")"; fi
run "$PIPESIM" report "$TMP/run.json" --out "$TMP/no_stories.html" --no-stories
if [ "$RC" -eq 0 ] && grep -q "not simulated: --no-stories" "$TMP/no_stories.html"; then pass "--no-stories"
else fail "--no-stories" "$(show)"; fi

# Bad input: exit 2, a message naming the input, nothing written.
expect_refused() {  # expect_refused NAME WANT ARGS...
  local name=$1 want=$2
  shift 2
  run "$PIPESIM" report "$@"
  if [ "$RC" -eq 2 ] && [ ! -s "$OUT" ] && grep -qF -- "$want" "$ERR" && [ ! -e "$TMP/bad.html" ]; then
    pass "$name: exit 2, names it, nothing written"
  else
    fail "$name: exit 2, names it, nothing written" "want: $want" "$(show)"
  fi
}
printf 'not json' >"$TMP/text.json"
printf '{"a": 1}' >"$TMP/other.json"
printf '{"estimates": {}, "metrics": 5, "seeds": {"first": 1, "count": 2}}' >"$TMP/partial.json"
mkdir -p "$TMP/emptydir"
expect_refused "a missing result" "$TMP/missing.json: no such file" "$TMP/missing.json" --out "$TMP/bad.html"
expect_refused "not JSON" "$TMP/text.json: not JSON" "$TMP/text.json" --out "$TMP/bad.html"
expect_refused "not a result" "$TMP/other.json is not a result of pipesim run" "$TMP/other.json" --out "$TMP/bad.html"
expect_refused "an incomplete run" "$TMP/partial.json: not a complete run result" "$TMP/partial.json" \
  --out "$TMP/bad.html"
expect_refused "a directory without sweep.json" "$TMP/emptydir is a directory without sweep.json" \
  "$TMP/emptydir" --out "$TMP/bad.html"
expect_refused "--out in a missing directory" "$TMP/nodir/x.html" "$TMP/run.json" --out "$TMP/nodir/x.html"
cp "$TMP/run.json" "$TMP/run_copy.json"
expect_refused "--out naming the result" "--out $TMP/run_copy.json is the result $TMP/run_copy.json: pipesim never overwrites one of its inputs" \
  "$TMP/run_copy.json" --out "$TMP/run_copy.json"
expect_refused "--out naming a sweep's points" "--out $TMP/sweep/points.jsonl is the sweep points $TMP/sweep/points.jsonl" \
  "$TMP/sweep" --out "$TMP/sweep/points.jsonl"
cmp -s "$TMP/run.json" "$TMP/run_copy.json" && pass "report: the result named by --out is left as it was" ||
  fail "report: the result named by --out changed"
run "$PIPESIM" report "$TMP/run.json"
expect_bad "no --out" "--out is required"

# The README's Bad input rows for report, word for word.
bad_exact() {  # bad_exact NAME MESSAGE ARGS...
  local name=$1 want=$2
  shift 2
  run "$PIPESIM" report "$@"
  if [ "$RC" -eq 2 ] && [ ! -s "$OUT" ] && [ "$(cat "$ERR")" == "$want" ]; then pass "$name: the README's message"
  else fail "$name: the README's message" "want: $want" "$(show)"; fi
}
bad_exact "a config given as a result" \
  "pipesim: $BASE is not a result of pipesim run --per-seed, compare or check (--format json), nor a sweep directory" \
  "$BASE" --out "$TMP/bad.html"
"$PY" -c 'import json, sys; d = json.load(open(sys.argv[1])); del d["config"]; json.dump(d, open(sys.argv[2], "w"))' \
  "$TMP/run.json" "$TMP/no_config.json"
bad_exact "a run without its config" \
  "pipesim: $TMP/no_config.json: not a complete run result ([json.exception.out_of_range.403] key 'config' not found)" \
  "$TMP/no_config.json" --out "$TMP/bad.html"
bad_exact "a directory that holds no sweep" \
  "pipesim: $TMP/emptydir is a directory without sweep.json: not a sweep directory (pipesim sweep --out DIR)" \
  "$TMP/emptydir" --out "$TMP/bad.html"

finish
