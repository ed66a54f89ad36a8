#!/usr/bin/env bash
# docs/guide.md's picture of `pipesim report`: the production baseline over 40
# seeds (one simulated day each), its page opened in headless Chromium, checked
# (tools/report_check.py) and photographed to docs/img/report_baseline.png.
# A screenshot depends on the fonts and the Chromium at hand, so it is not
# compared byte for byte anywhere; report_test checks the page itself.
#
# usage: bash tools/report_screenshot.sh PIPESIM   (about 30 s on 2 cores)
set -euo pipefail
PIPESIM=${1:?usage: tools/report_screenshot.sh PIPESIM}
cd "$(dirname "$0")/.."
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
"$PIPESIM" run --seeds 40 --per-seed --format json --out "$TMP/baseline.json"
"$PIPESIM" report "$TMP/baseline.json" --out "$TMP/baseline.html"
/usr/bin/python3 tools/report_check.py "$TMP/baseline.json" "$TMP/baseline.html" \
  --screenshot docs/img/report_baseline.png
