#!/usr/bin/env bash
# The repository cites no document outside itself: no "SPEC §" or other
# outside design notes in any tracked file, and every "docs/model.md §N"
# citation names a section docs/model.md has.
#
# Run by ctest as: PIPESIM_SOURCE_DIR=<repo root> bash tests/docs_test.sh
set -u
SRC=${PIPESIM_SOURCE_DIR:?set PIPESIM_SOURCE_DIR to the repository root}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/pipesim_docs_test.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
cd "$SRC" || exit 2

# Tracked files (git when there is a checkout, else every file but build trees).
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  files=$(git ls-files)
else
  files=$(find . -type f -not -path './build*' -not -path './.git/*' | sed 's|^\./||')
fi
# The pattern is split so that this file does not match itself.
outside=$(echo "$files" | grep -v '^tests/docs_test.sh$' | xargs grep -lE "SPEC ""§|DESIGN""\.md|STYLE""\.md|\.\./shared/" 2>/dev/null)
if [ -z "$outside" ]; then
  pass "no file cites a document outside the repository"
else
  fail "no file cites a document outside the repository" "$outside"
fi

[ -f docs/model.md ] && pass "docs/model.md exists" || fail "docs/model.md exists"
missing=""
for n in $(echo "$files" | xargs grep -ohE "docs/model\.md §[0-9]+(\.[0-9]+)?" 2>/dev/null | sed 's/.*§//' | sort -u); do
  grep -qE "^#+ $n[ .]" docs/model.md || missing="$missing §$n"
done
if [ -z "$missing" ]; then
  pass "every docs/model.md section cited exists"
else
  fail "every docs/model.md section cited exists" "missing:$missing"
fi
# Every link of a tracked Markdown file leads somewhere: a relative file that exists, a
# fragment that is one of the target's headings (GitHub's anchors: lower case, punctuation
# dropped, spaces to hyphens).
dangling=$(echo "$files" | grep '\.md$' | /usr/bin/python3 -c '
import os, re, sys
def anchors(path):
    text = open(path, encoding="utf-8").read()
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-")
            for h in re.findall(r"^#+ (.+)$", text, re.M)}
for md in sys.stdin.read().split():
    text = open(md, encoding="utf-8").read()
    for target, fragment in re.findall(r"\]\(([^)#\s]*)(?:#([^)\s]*))?\)", text):
        if re.match(r"[a-z]+:", target):
            continue
        path = os.path.normpath(os.path.join(os.path.dirname(md), target)) if target else md
        if not os.path.exists(path):
            print(f"{md}: link to missing {target}")
        elif fragment and path.endswith(".md") and fragment not in anchors(path):
            print(f"{md}: link to missing #{fragment} of {path}")
')
if [ -z "$dangling" ]; then
  pass "every Markdown link leads to a file and heading that exist"
else
  fail "every Markdown link leads to a file and heading that exist" "$dangling"
fi
finish
