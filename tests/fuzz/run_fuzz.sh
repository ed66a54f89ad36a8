#!/usr/bin/env bash
# Short libFuzzer runs of both targets, side by side (one core each).
#   bash tests/fuzz/run_fuzz.sh BUILD_DIR [SECONDS]
# BUILD_DIR was configured with CXX=clang++-14 -DPIPESIM_FUZZ=ON. The seed
# corpus in tests/fuzz/corpus/<target> (with tests/fuzz/<target>.dict) is read, never written: new inputs go
# to BUILD_DIR/fuzz/<target>/corpus. A finding (crash, sanitizer report,
# timeout, leak) is saved under BUILD_DIR/fuzz/<target>/ and fails the run;
# reproduce it with BUILD_DIR/tests/fuzz/<target> FILE.
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:?usage: run_fuzz.sh BUILD_DIR [SECONDS]}
SECONDS_EACH=${2:-60}

pids=()
targets=(config_fuzz decide_cases_fuzz)
for t in "${targets[@]}"; do
  work=$BUILD/fuzz/$t
  rm -rf "$work" && mkdir -p "$work/corpus"
  "$BUILD/tests/fuzz/$t" "$work/corpus" "tests/fuzz/corpus/$t" \
    -dict="tests/fuzz/$t.dict" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 \
    -max_len=8192 -artifact_prefix="$work/" -print_final_stats=1 >"$work/log" 2>&1 &
  pids+=($!)
done

status=0
for i in "${!targets[@]}"; do
  t=${targets[$i]}
  if wait "${pids[$i]}"; then
    echo "fuzz: $t: no finding in ${SECONDS_EACH}s ($(grep -m1 -o 'stat::number_of_executed_units: *[0-9]*' "$BUILD/fuzz/$t/log" | grep -o '[0-9]*$') inputs)"
  else
    status=1
    echo "fuzz: $t: FINDING (log $BUILD/fuzz/$t/log):"
    grep -E 'ERROR|finding|SUMMARY|Test unit written' "$BUILD/fuzz/$t/log" | head -20
  fi
done
exit $status
