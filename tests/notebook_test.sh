#!/usr/bin/env bash
# Runs one notebook of notebooks/ top to bottom (jupyter nbconvert --execute), as
# CI does: the notebook runs its own sweep from configs/sweeps/ with this build's
# pipesim, reads the outputs with pandas and saves its figure. Sweeps and figures
# go to a temporary directory (the committed notebooks/img/*.png stay untouched).
# Needs jupyter-nbconvert, python3-nbclient, python3-ipykernel, python3-pandas and
# python3-matplotlib (bash dev test installs them).
#
# Run by ctest as: PIPESIM=<binary> PIPESIM_SOURCE_DIR=<repo root> bash tests/notebook_test.sh NAME
set -u

PIPESIM=${PIPESIM:?set PIPESIM to the pipesim binary}
SRC=${PIPESIM_SOURCE_DIR:?set PIPESIM_SOURCE_DIR to the repository root}
NAME=${1:?usage: notebook_test.sh NAME (notebooks/NAME.ipynb)}

TMP=$(mktemp -d "${TMPDIR:-/tmp}/pipesim_notebook_test.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

if ! command -v jupyter-nbconvert >/dev/null; then
  echo "FAIL - jupyter-nbconvert is not installed (bash dev test installs it)"
  exit 1
fi

export PIPESIM PIPESIM_NOTEBOOK_OUT=$TMP/out PIPESIM_NOTEBOOK_IMG=$TMP/img PIPESIM_THREADS=2
export PYDEVD_DISABLE_FILE_VALIDATION=1 MPLBACKEND=Agg
# nbconvert stops at the first cell that raises and exits non-zero.
if ! jupyter-nbconvert --to notebook --execute --ExecutePreprocessor.timeout=900 \
     --output-dir "$TMP/run" "$SRC/notebooks/$NAME.ipynb" >"$TMP/log" 2>&1; then
  echo "FAIL - notebooks/$NAME.ipynb runs top to bottom"
  grep -v '^0.00s' "$TMP/log" | tail -n 40
  exit 1
fi
echo "ok   - notebooks/$NAME.ipynb runs top to bottom"

failed=0
png=$TMP/img/$NAME.png
if [ "$(head -c 8 "$png" 2>/dev/null | od -An -tx1 | tr -d ' \n')" == "89504e470d0a1a0a" ] &&
   [ "$(wc -c <"$png")" -gt 10000 ]; then
  echo "ok   - it saved the figure img/$NAME.png"
else
  echo "FAIL - it saved the figure img/$NAME.png"
  failed=1
fi
# The notebook printed the sweep it ran (the command) and the figure's path.
if /usr/bin/python3 - "$TMP/run/$NAME.ipynb" "$png" <<'PYEOF'
import json, sys
nb = json.load(open(sys.argv[1]))
text = "".join("".join(o.get("text", "")) for c in nb["cells"] if c["cell_type"] == "code" for o in c.get("outputs", []))
errors = [o for c in nb["cells"] if c["cell_type"] == "code" for o in c.get("outputs", []) if o.get("output_type") == "error"]
assert not errors, errors
assert "$ pipesim sweep configs/sweeps/" in text, text[:500]
assert sys.argv[2] in text, text[-500:]
PYEOF
then
  echo "ok   - its outputs show the sweep and the figure, no errors"
else
  echo "FAIL - its outputs show the sweep and the figure, no errors"
  failed=1
fi
# The committed figure is the one the notebook draws now: matplotlib's PNG is byte-for-byte
# reproducible (sweeplib.save drops the Software stamp; the sweep is deterministic), so a figure
# left stale by a change that moved its numbers fails here. Regenerate the committed figures with
# tools/regenerate_figures.sh.
if cmp -s "$png" "$SRC/notebooks/img/$NAME.png"; then
  echo "ok   - notebooks/img/$NAME.png is the figure the notebook draws now"
else
  echo "FAIL - notebooks/img/$NAME.png is the figure the notebook draws now (regenerate: bash tools/regenerate_figures.sh $PIPESIM)"
  failed=1
fi
exit $failed
