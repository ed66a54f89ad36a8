#!/usr/bin/python3
"""Opens a `pipesim report` page in headless Chromium and checks, from the DOM
the browser built, that every chart rendered and that every number the page
shows equals the one in the result it was made from.

usage: report_check.py RESULT PAGE.html [--chromium BIN] [--screenshot PNG]

RESULT is what `pipesim report` read: the JSON of run --per-seed, compare or
check, or a sweep directory (read here as {"sweep": sweep.json, "points":
[points.jsonl lines]}, the layout the page's pointers use).

What is checked (each independently of pipesim's C++):
  - the page is self-contained: no element loads anything by URL, size < 5 MB;
  - the browser ran the page's script: body says N charts of N rendered, one
    canvas per chart spec, none with an error, each with ink on it and as many
    drawn elements as its data has values;
  - every value a chart drew equals the result's value its spec points at
    (bars, intervals, lines and their bands; a dataset with a "scale" shows the
    result's value divided by it: a sweep's per-run figures per day); a
    histogram's counts are counted again here from the result's per-seed
    metrics and the bin edges shown;
  - every table cell that names a source (data-src: JSON pointers) shows the
    result's numbers, to the precision shown (half a unit of the last digit);
  - the layout, opened 1100 px wide: no table, story or chart wider than the
    page's column or scrolling inside it, no chart whose values are all zero
    (the page says so in words instead).
"""
import argparse
import decimal
import html.parser
import json
import os
import re
import subprocess
import sys
import tempfile

NUMBER = re.compile(r"-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|-?inf|nan")


def load_result(path):
    if os.path.isdir(path):
        with open(os.path.join(path, "sweep.json")) as f:
            doc = {"sweep": json.load(f), "points": []}
        lines = os.path.join(path, "points.jsonl")
        if os.path.exists(lines):
            with open(lines) as f:
                doc["points"] = [json.loads(line) for line in f if line.strip()]
        return doc
    with open(path) as f:
        return json.load(f)


def resolve(doc, pointer):
    node = doc
    for token in pointer.split("/")[1:]:
        token = token.replace("~1", "/").replace("~0", "~")
        node = node[int(token)] if isinstance(node, list) else node[token]
    return node


class Dom(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.cells = []  # (data-src, text)
        self.canvases = []  # attribute dicts
        self.body = {}
        self.specs_text = ""
        self.urls = []
        self._cell = None
        self._in_specs = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for key in ("src", "href"):
            if key in a and re.match(r"^(https?:)?//", a[key] or ""):
                self.urls.append(f"<{tag} {key}={a[key]}>")
        if tag == "body":
            self.body = a
        elif tag == "canvas":
            self.canvases.append(a)
        elif tag == "td" and "data-src" in a:
            self._cell = [a["data-src"], ""]
        elif tag == "script" and a.get("id") == "pipesim-charts":
            self._in_specs = True

    def handle_endtag(self, tag):
        if tag == "td" and self._cell is not None:
            self.cells.append(tuple(self._cell))
            self._cell = None
        elif tag == "script":
            self._in_specs = False

    def handle_data(self, data):
        if self._cell is not None:
            self._cell[1] += data
        if self._in_specs:
            self.specs_text += data


def shown_matches(text, value):
    """The number `text` shows stands for `value` to the precision shown."""
    if text in ("inf", "-inf", "nan"):
        return str(value) == text or (text == "nan" and value != value)
    shown = decimal.Decimal(text)
    tolerance = decimal.Decimal(5) * decimal.Decimal(10) ** (shown.as_tuple().exponent - 1)
    return abs(decimal.Decimal(repr(float(value))) - shown) <= tolerance * (1 + decimal.Decimal("1e-9"))


def same(drawn, expected):
    if isinstance(expected, list):
        return isinstance(drawn, list) and len(drawn) == len(expected) and all(
            same(d, e) for d, e in zip(drawn, expected))
    if expected is None or drawn is None:
        return drawn is None and expected is None
    return abs(float(drawn) - float(expected)) <= 1e-9 * max(1.0, abs(float(expected)))


def expected_values(doc, sources):
    if isinstance(sources, list):
        return [expected_values(doc, s) for s in sources]
    return None if sources is None else resolve(doc, sources)


def histogram_counts(doc, spec):
    h = spec["histogram_of"]
    edges = h["edges"]
    values = [run["metrics"][h["metric"]] for run in resolve(doc, h["runs"])]
    counts = [0] * (len(edges) - 1)
    for v in values:
        bins = [i for i in range(len(counts)) if edges[i] <= v < edges[i + 1]]
        counts[bins[0] if bins else len(counts) - 1] += 1  # the last bin holds the maximum
    return counts


def check(result_path, page_path, chromium, screenshot):
    failures = []
    doc = load_result(result_path)
    size = os.path.getsize(page_path)
    if size > 5 * 1024 * 1024:
        failures.append(f"the page is {size} bytes (over 5 MB)")
    url = "file://" + os.path.abspath(page_path)
    flags = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
             "--hide-scrollbars", "--virtual-time-budget=10000"]
    with tempfile.TemporaryDirectory() as profile:
        flags.append("--user-data-dir=" + profile)
        flags.append("--window-size=1100,2600")
        dom_text = subprocess.run(flags + ["--dump-dom", url], capture_output=True, text=True, timeout=300,
                                  check=True).stdout
        if screenshot:
            subprocess.run(flags + ["--screenshot=" + screenshot, url], capture_output=True, timeout=300,
                           check=True)
    dom = Dom()
    dom.feed(dom_text)
    failures += [f"the page loads {u} (it must be self-contained)" for u in dom.urls]
    specs = json.loads(dom.specs_text) if dom.specs_text.strip() else []
    # No chart at all is a page whose every chart would show zeros (it says so in words).
    if dom.body.get("data-charts") != str(len(specs)) or dom.body.get("data-charts-rendered") != str(len(specs)):
        failures.append(f"body says {dom.body.get('data-charts-rendered')} of {dom.body.get('data-charts')} charts "
                        f"rendered; the page has {len(specs)} (did the script run?)")
    if dom.body.get("data-too-wide") is None:
        failures.append("body does not say whether anything is too wide (did the script run?)")
    elif dom.body.get("data-too-wide"):
        failures.append(f"wider than the page's column ({dom.body.get('data-column-px')} px): "
                        f"{dom.body.get('data-too-wide')}")
    canvases = {c.get("id"): c for c in dom.canvases}
    values_checked = 0
    for spec in specs:
        c = canvases.get(spec["id"])
        where = f"chart {spec['id']} ({spec.get('title')})"
        if c is None:
            failures.append(f"{where}: no canvas")
            continue
        if c.get("data-error"):
            failures.append(f"{where}: {c['data-error']}")
            continue
        if c.get("data-rendered") != "true":
            failures.append(f"{where}: not rendered")
            continue
        if int(c.get("data-ink", "0")) < 1000:
            failures.append(f"{where}: almost nothing drawn ({c.get('data-ink')} pixels)")
        drawn = {d["label"]: d["data"] for d in json.loads(c["data-drawn"])}
        values = [v for d in spec["datasets"] for v in d.get("values", [])]
        if values and all(v == 0 for v in values):
            failures.append(f"{where}: every value is 0 (an empty chart)")
        total = sum(len(d) for d in drawn.values())
        if int(c.get("data-elements", "-1")) != total:
            failures.append(f"{where}: {c.get('data-elements')} elements drawn for {total} values")
        for d in spec["datasets"]:
            got = drawn.get(d["name"])
            if got is None or len(got) != len(spec["labels"]):
                failures.append(f"{where}: dataset {d['name']!r} drawn with {None if got is None else len(got)} "
                                f"values for {len(spec['labels'])} labels")
                continue
            if "histogram_of" in spec:
                want = histogram_counts(doc, spec)
                if got != want:
                    failures.append(f"{where}: counts {got}, the result's seeds give {want}")
                values_checked += len(want)
                continue
            checks = [(got, d.get("src"))]
            if "lo_src" in d:
                if spec["kind"] == "bars":
                    interval = drawn.get("95% CI", [])
                    checks.append(([p[0] if p else None for p in interval], d["lo_src"]))
                    checks.append(([p[1] if p else None for p in interval], d["hi_src"]))
                else:
                    checks.append((drawn.get(d["name"] + " lo"), d["lo_src"]))
                    checks.append((drawn.get(d["name"] + " hi"), d["hi_src"]))
            for values, sources in checks:
                if sources is None:
                    failures.append(f"{where}: dataset {d['name']!r} names no source")
                    continue
                for i, (v, s) in enumerate(zip(values or [], sources)):
                    want = expected_values(doc, s)
                    # A chart per day of runs of several days: the result's per-run figure / days.
                    if "scale" in d and isinstance(want, (int, float)):
                        want = want / d["scale"]
                    # A bound the page computed (no source) is not the result's number.
                    if isinstance(s, list):
                        v = [x for x, p in zip(v, s) if p is not None]
                        want = [x for x in want if x is not None]
                    if not same(v, want):
                        failures.append(f"{where}: {spec['labels'][i]!r} drawn as {v}, the result has {want} ({s})")
                    values_checked += 1
    if len(canvases) != len(specs):
        failures.append(f"{len(canvases)} canvases for {len(specs)} chart specs")
    for src, text in dom.cells:
        numbers = NUMBER.findall(text)
        want = []
        try:
            for pointer in src.split():
                v = resolve(doc, pointer)
                want += v if isinstance(v, list) else [v]
        except (KeyError, IndexError, ValueError, TypeError):
            failures.append(f"cell {text!r}: {src} is not in the result")
            continue
        if len(numbers) != len(want) or not all(shown_matches(n, w) for n, w in zip(numbers, want)):
            failures.append(f"cell shows {text!r}, the result has {want} ({src})")
    if not dom.cells:
        failures.append("no table cell names its source")
    for f in failures:
        print("report check: " + f, file=sys.stderr)
    print(f"report check: {os.path.basename(page_path)}: {len(specs)} of {len(specs)} charts rendered"
          if not failures else f"report check: {os.path.basename(page_path)}: {len(failures)} failures",
          f"({values_checked} chart values and {len(dom.cells)} table cells compared with the result)")
    return 1 if failures else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("result")
    ap.add_argument("page")
    ap.add_argument("--chromium", default="chromium")
    ap.add_argument("--screenshot")
    a = ap.parse_args()
    return check(a.result, a.page, a.chromium, a.screenshot)


if __name__ == "__main__":
    sys.exit(main())
