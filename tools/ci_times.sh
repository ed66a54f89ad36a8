#!/usr/bin/env bash
# The table `bash dev test` ends with: each stage's wall time, then the 10 slowest tests of
# the stage, from ctest's own timings ("Test #N: NAME ....   Passed   12.34 sec").
#   bash tools/ci_times.sh LOG_DIR "NAME|SECONDS" ...
# The first entry is the apt installs; LOG_DIR/K is the output of the K-th stage after it; the budget is CI's
# 1,800 s (README, "Set up").
# No `head` after `sort` here: under pipefail, head's early exit kills sort with SIGPIPE
# and the whole suite would fail with exit 141 after passing (CI run of 96b7c48).
set -euo pipefail
LOGS=${1:?usage: ci_times.sh LOG_DIR "NAME|SECONDS" ...}
shift
total=0
for stage in "$@"; do total=$((total + ${stage##*|})); done
echo
echo "== CI time: ${total} s of the 1800 s budget"
k=-1  # the first entry is the installs, with no log
for stage in "$@"; do
  k=$((k + 1))
  printf '%-52s %6d s\n' "${stage%|*}" "${stage##*|}"
  [ -f "$LOGS/$k" ] || continue
  sed -nE 's/^.*Test +#[0-9]+: ([^ ]+) \.+.* ([0-9]+\.[0-9]+) sec.*$/\2 \1/p' "$LOGS/$k" |
    sort -rn | awk 'NR <= 10' | while read -r seconds name; do
      printf '    %8.1f s  %s\n' "$seconds" "$name"
    done
done
