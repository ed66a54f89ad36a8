#!/usr/bin/env bash
# Regenerates every committed figure from this build: the notebooks' figures in
# notebooks/img (each notebook runs its sweep and draws) and VALIDATION.md's tables with
# the figure in docs/img (tools/validation_doc.py). CI checks both are current: ctest
# notebook_* compares each notebook's fresh figure with notebooks/img byte for byte, and
# validation_doc_* each table and docs/img figure.
#   bash tools/regenerate_figures.sh [PIPESIM]      (default: build/pipesim)
set -euo pipefail
cd "$(dirname "$0")/.."
PIPESIM=$(readlink -f "${1:-build/pipesim}")
export PIPESIM PIPESIM_NOTEBOOK_IMG=$PWD/notebooks/img MPLBACKEND=Agg PYDEVD_DISABLE_FILE_VALIDATION=1
OUT=$(mktemp -d "${TMPDIR:-/tmp}/pipesim_figures.XXXXXX")
trap 'rm -rf "$OUT"' EXIT
export PIPESIM_NOTEBOOK_OUT=$OUT/out
for notebook in notebooks/*.ipynb; do
  echo "regenerate_figures: $notebook" >&2
  jupyter-nbconvert --to notebook --execute --ExecutePreprocessor.timeout=900 --output-dir "$OUT/run" \
    "$notebook" >/dev/null 2>&1 || { echo "regenerate_figures: $notebook failed" >&2; exit 1; }
done
echo "regenerate_figures: VALIDATION.md and docs/img" >&2
/usr/bin/python3 tools/validation_doc.py "$PIPESIM"
git status --short notebooks/img docs/img VALIDATION.md
