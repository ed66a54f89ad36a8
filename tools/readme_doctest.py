#!/usr/bin/python3
"""Runs every example session of the README (and of the documents given after
it) and compares its output with what the document shows.

A session is a fenced code block whose first line starts with "$ ". Each
"$ " line is a command (continued over the next lines while bash finds it
incomplete, or the line ends in a backslash or a pipe); the lines after it, up
to the next command, are its expected output (stdout and stderr together).
All sessions run in order in one scratch directory where configs/, tools/ and
notebooks/ are the repository's and `pipesim` (also build-release/pipesim) is
the binary under test, so a session may use what an earlier one wrote (out/...).

Comparison: trailing blanks are ignored; an expected line "..." stands for any
number of lines. An HTML comment right before a block can say
  <!-- doctest: skip: WHY -->         the block is not run (WHY is printed), or
  <!-- doctest: mask REGEX: WHY -->    text matching REGEX is masked on both sides;
nothing else is ever masked, and each mask prints its reason.

Usage: readme_doctest.py PIPESIM DOC [DOC...] [--keep DIR] [--update]. The
documents' sessions run in the order given, in the same scratch directory (the
repository is the first document's nearest ancestor holding configs/). Exit 0
when every session matches, 1 otherwise (each difference printed). --update
writes what the commands printed into each document instead, keeping each "..." where it was
(the lines around it re-taken from the output: the first and last runs of lines
at the output's ends, the others where a line with the same label starts);
sessions with a mask are left as they are. Read the diff before committing it.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

DIRECTIVE = re.compile(r"^<!-- doctest: (skip|mask):? (.*) -->$")


def sessions(readme_text):
    """Yields (line number, directives, block lines) for each session block."""
    lines = readme_text.split("\n")
    i = 0
    while i < len(lines):
        if lines[i].startswith("```"):
            start = i
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            block = lines[i + 1:j]
            directives = []
            k = start - 1
            while k >= 0 and DIRECTIVE.match(lines[k]):
                directives.insert(0, DIRECTIVE.match(lines[k]).groups())
                k -= 1
            if block and block[0].startswith("$ "):
                yield start + 1, directives, block
            i = j + 1
        else:
            i += 1


def incomplete(command):
    if command.endswith("\\") or command.rstrip().endswith("|"):
        return True
    check = subprocess.run(["bash", "-n", "-c", command], capture_output=True, text=True)
    return check.returncode != 0 and "unexpected end of file" in check.stderr


def commands(block):
    """Splits a block into (command, expected output lines)."""
    out = []
    i = 0
    while i < len(block):
        if not block[i].startswith("$ "):
            i += 1
            continue
        command = block[i][2:]
        i += 1
        while i < len(block) and incomplete(command):
            command += "\n" + block[i]
            i += 1
        expected = []
        while i < len(block) and not block[i].startswith("$ "):
            expected.append(block[i])
            i += 1
        out.append((command, expected))
    return out


def matches(expected, actual):
    """Whether actual matches expected, "..." matching any run of lines."""
    memo = {}

    def go(e, a):
        if (e, a) in memo:
            return memo[(e, a)]
        if e == len(expected):
            result = a == len(actual)
        elif expected[e] == "...":
            result = any(go(e + 1, k) for k in range(a, len(actual) + 1))
        else:
            result = a < len(actual) and expected[e] == actual[a] and go(e + 1, a + 1)
        memo[(e, a)] = result
        return result

    return go(0, 0)


def label(line):
    """A line's text before its first number or column gap ("duplicate rows per day")."""
    return re.split(r"\s{2,}|\d", line, maxsplit=1)[0]


def merge(expected, actual):
    """The README's new lines for a command: `actual`, with each "..." of `expected` kept."""
    if "..." not in expected:
        return actual
    segments = [[]]
    for line in expected:
        if line == "...":
            segments.append([])
        else:
            segments[-1].append(line)
    out = list(actual[:len(segments[0])])
    cursor = len(segments[0])
    tail = segments[-1]
    tail_at = len(actual) - len(tail)
    for seg in segments[1:-1]:
        out.append("...")
        found = next((i for i in range(cursor, tail_at) if seg and label(actual[i]) == label(seg[0])), None)
        if found is None:
            out.extend(seg)
            continue
        out.extend(actual[found:found + len(seg)])
        cursor = found + len(seg)
    out.append("...")
    out.extend(actual[tail_at:] if tail else [])
    return out


def check_document(path, name, work, env, update):
    """Runs one document's sessions in `work`; returns (failures, commands checked)."""
    failures = 0
    checked = 0
    with open(path, encoding="utf-8") as f:
        text = f.read()
    rewrites = []  # (first line index, block length, new block lines)
    for line_number, directives, block in sessions(text):
        skip = [why for kind, why in directives if kind == "skip"]
        if skip:
            print(f"skip {name}:{line_number}: {skip[0].lstrip(': ')}")
            continue
        masks = []
        for kind, rest in directives:
            if kind == "mask":
                regex, _, why = rest.partition(": ")
                masks.append(re.compile(regex))
                print(f"mask {name}:{line_number}: /{regex}/ because {why}")

        def clean(lines):
            out = []
            for line in lines:
                line = line.rstrip()
                for m in masks:
                    line = m.sub("<masked>", line)
                out.append(line)
            while out and out[-1] == "":
                out.pop()
            return out

        new_block = []
        for command, expected in commands(block):
            new_block.extend(("$ " + command).split("\n"))
            started = time.monotonic()
            run = subprocess.run(["bash", "-c", command], cwd=work, env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True, stdin=subprocess.DEVNULL)
            actual = clean(run.stdout.split("\n"))
            want = clean(expected)
            checked += 1
            # The wall time of each command: where the test's time goes (CI's budget).
            took = f"({time.monotonic() - started:.1f} s)"
            if matches(want, actual):
                new_block.extend(expected)
                print(f"ok   {name}:{line_number} {took}: $ {command.splitlines()[0]}")
            else:
                new_block.extend(merge(want, actual) if not masks else expected)
                failures += 1
                print(f"FAIL {name}:{line_number} {took}: $ {command.splitlines()[0]}")
                print(f"  {name} shows:")
                for line in want:
                    print("    " + line)
                print("  the command printed:")
                for line in actual:
                    print("    " + line)
        if update and not masks and new_block != block:
            rewrites.append((line_number, len(block), new_block))
    if update and rewrites:
        lines = text.split("\n")
        for first, length, new in sorted(rewrites, reverse=True):
            lines[first:first + length] = new
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(lines))
        print(f"readme_doctest: {len(rewrites)} sessions rewritten in {name}")
    return failures, checked


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    binary = os.path.abspath(sys.argv[1])
    args = sys.argv[2:]
    update = "--update" in args
    args = [a for a in args if a != "--update"]
    keep = None
    if "--keep" in args:
        i = args.index("--keep")
        keep = args[i + 1]
        del args[i:i + 2]
    docs = [os.path.abspath(a) for a in args]
    repo = os.path.dirname(docs[0])
    while not os.path.isdir(os.path.join(repo, "configs")) and os.path.dirname(repo) != repo:
        repo = os.path.dirname(repo)
    work = keep or tempfile.mkdtemp(prefix="pipesim_readme_doctest.")
    os.makedirs(work, exist_ok=True)
    bin_dir = os.path.join(work, ".bin")
    os.makedirs(bin_dir, exist_ok=True)
    for name in ("configs", "tools", "notebooks"):
        if not os.path.exists(os.path.join(work, name)):
            os.symlink(os.path.join(repo, name), os.path.join(work, name))
    # Also where `bash dev run` builds it.
    os.makedirs(os.path.join(work, "build-release"), exist_ok=True)
    for target in (os.path.join(bin_dir, "pipesim"), os.path.join(work, "build-release", "pipesim")):
        if not os.path.exists(target):
            os.symlink(binary, target)
    env = dict(os.environ, PATH=bin_dir + os.pathsep + os.environ.get("PATH", ""), COLUMNS="100")
    env.pop("PIPESIM", None)

    failures = 0
    checked = 0
    for doc in docs:
        f, c = check_document(doc, os.path.relpath(doc, repo), work, env, update)
        failures += f
        checked += c
    if not keep:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{checked - failures} of {checked} commands match")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
