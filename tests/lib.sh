# The helpers the shell tests share (cli_test.sh, sweep_cli_test.sh,
# dask_sweep_test.sh): TAP-like "ok"/"FAIL" lines, a command runner that
# keeps stdout, stderr and the exit code, and the usual expectations.
# Source it after setting TMP (a scratch directory); end with `finish`.

passed=0
failed=0

pass() {
  passed=$((passed + 1))
  echo "ok   - $1"
}

# fail NAME [DETAIL...]: each detail on its own indented line.
fail() {
  failed=$((failed + 1))
  echo "FAIL - $1"
  shift
  local line
  for line in "$@"; do echo "       $line"; done
}

# run CMD...: runs it with stdout in $OUT, stderr in $ERR and exit code in $RC.
OUT=$TMP/stdout
ERR=$TMP/stderr
RC=0
# With PIPESIM_TEST_TIMES=FILE, each command's wall time is appended to FILE (where a
# script's time goes: CI's budget).
run() {
  local started=$EPOCHREALTIME
  "$@" >"$OUT" 2>"$ERR" </dev/null
  RC=$?
  time_log "$started" "$@"
}
# run_stdin INPUT CMD...: the same with INPUT on stdin.
run_stdin() {
  local input=$1 started=$EPOCHREALTIME
  shift
  printf '%s' "$input" | "$@" >"$OUT" 2>"$ERR"
  RC=$?
  time_log "$started" "$@"
}
time_log() {  # time_log STARTED CMD...
  [ -n "${PIPESIM_TEST_TIMES:-}" ] || return 0
  local started=$1
  shift
  awk -v now="$EPOCHREALTIME" -v then="$started" -v cmd="$*" \
    'BEGIN { printf "%.2f %s\n", now - then, cmd }' >>"$PIPESIM_TEST_TIMES"
}

show() {
  echo "rc=$RC"
  echo "stdout: $(head -c 400 "$OUT")"
  echo "stderr: $(head -c 600 "$ERR")"
}

# expect_ok NAME: the last run exited 0.
expect_ok() {
  if [ "$RC" -eq 0 ]; then pass "$1"; else fail "$1" "$(show)"; fi
}

# expect_rc NAME CODE: the last run exited with CODE.
expect_rc() {
  if [ "$RC" -eq "$2" ]; then pass "$1: exit $2"; else fail "$1: exit $2" "$(show)"; fi
}

# expect_bad NAME EXPECTED_STDERR_SUBSTRING: exit 2, nothing on stdout, the message on stderr.
expect_bad() {
  local name=$1 want=$2
  if [ "$RC" -eq 2 ] && [ ! -s "$OUT" ] && grep -qF -- "$want" "$ERR"; then
    pass "$name: exit 2, stdout empty, stderr names it"
  else
    fail "$name: exit 2, stdout empty, stderr contains: $want" "$(show)"
  fi
}

# same_files NAME DIR_A DIR_B [DETAIL...]: both directories hold the same file
# names with the same bytes; the details are printed on failure.
same_files() {
  local name=$1 a=$2 b=$3
  shift 3
  if [ -d "$a" ] && [ -d "$b" ] && [ "$(cd "$a" && ls)" == "$(cd "$b" && ls)" ] &&
    diff -r "$a" "$b" >/dev/null; then
    pass "$name"
  else
    fail "$name" "files: $(cd "$a" 2>/dev/null && ls | tr '\n' ' ') vs $(cd "$b" 2>/dev/null && ls | tr '\n' ' ')" \
      "$(diff -r "$a" "$b" 2>&1 | head -c 400)" "$@"
  fi
}

# finish: the summary line; the exit status is non-zero when a check failed.
finish() {
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
}
