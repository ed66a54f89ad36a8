#!/usr/bin/env bash
# The fingerprint of pipesim's answers, for a change that must not move them
# (a refactoring): `run --per-seed --format json` of every config in configs/
# (production, lab, scenarios, sweeps; the checks are expectation files) over
# 3 seeds, one line per config with the exit code and the SHA-256 of what it
# printed. Run it before and after the change and compare the two files:
#
#   bash tools/output_identity.sh build/pipesim > before.txt
#   ... change, rebuild ...
#   bash tools/output_identity.sh build/pipesim > after.txt && cmp before.txt after.txt
#
# usage: bash tools/output_identity.sh PIPESIM   (about 1 min on 2 cores)
set -euo pipefail
PIPESIM=${1:?usage: tools/output_identity.sh PIPESIM}
cd "$(dirname "$0")/.."
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
for config in configs/production.json configs/lab/*.json configs/scenarios/*.json configs/sweeps/*.json; do
  rc=0
  "$PIPESIM" run "$config" --seeds 3 --per-seed --format json >"$TMP/out" 2>"$TMP/err" || rc=$?
  echo "$config rc=$rc out $(sha256sum <"$TMP/out" | cut -c1-16) err $(sha256sum <"$TMP/err" | cut -c1-16)"
done
