"""Helpers the notebooks share: find pipesim, run a sweep from configs/sweeps/,
read its summary.csv (pandas) and manifest (sweep.json), save figures.

Environment (all optional):
  PIPESIM               the pipesim binary (else pipesim on PATH, else ../build*/pipesim)
  PIPESIM_NOTEBOOK_OUT  where sweeps are written (default: notebooks/out, git-ignored)
  PIPESIM_NOTEBOOK_IMG  where figures are saved (default: notebooks/img, shown by the README)
  PIPESIM_THREADS       pipesim --threads (default: all cores)
"""

import json
import os
import re
import shutil
import subprocess
import time

import pandas as pd

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def pipesim_binary():
    if os.environ.get("PIPESIM"):
        return os.environ["PIPESIM"]
    on_path = shutil.which("pipesim")
    if on_path:
        return on_path
    for build in ("build", "build-release", "build-test"):
        candidate = os.path.join(ROOT, build, "pipesim")
        if os.access(candidate, os.X_OK):
            return candidate
    raise FileNotFoundError("no pipesim binary: build it (bash dev run) or set PIPESIM")


def run_sweep(name, *extra):
    """Runs `pipesim sweep configs/sweeps/<name>.json` afresh into OUT/<name>; returns the directory."""
    out = os.path.join(os.environ.get("PIPESIM_NOTEBOOK_OUT", os.path.join(HERE, "out")), name)
    shutil.rmtree(out, ignore_errors=True)
    cmd = [pipesim_binary(), "sweep", os.path.join(ROOT, "configs", "sweeps", name + ".json"), "--out", out, *extra]
    if os.environ.get("PIPESIM_THREADS"):
        cmd += ["--threads", os.environ["PIPESIM_THREADS"]]
    start = time.monotonic()
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed (exit {done.returncode}):\n{done.stderr}")
    print(f"$ pipesim sweep configs/sweeps/{name}.json --out {os.path.relpath(out, HERE)}   "
          f"# {time.monotonic() - start:.1f} s")
    return out


def load(out):
    """The sweep's manifest (dict) and summary (DataFrame, one row per point)."""
    with open(os.path.join(out, "sweep.json")) as f:
        manifest = json.load(f)
    return manifest, pd.read_csv(os.path.join(out, "summary.csv"))


_UNITS = {"us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def seconds(duration):
    """pipesim's duration strings ("500ms", "30s", "2h", "1d") in seconds."""
    m = re.fullmatch(r"([0-9.]+)(us|ms|s|m|h|d)", duration)
    if not m:
        raise ValueError(f"not a duration: {duration!r}")
    return float(m.group(1)) * _UNITS[m.group(2)]


def run_seconds(manifest):
    """Simulated time with workload and faults (run.duration of the base config)."""
    return seconds(manifest["base_config"]["run"]["duration"])


def not_modelled(manifest, metric):
    return metric in manifest.get("metrics_not_modelled", [])


def save(fig, name):
    """Saves the figure as IMG/<name>.png and returns the path."""
    img = os.environ.get("PIPESIM_NOTEBOOK_IMG", os.path.join(HERE, "img"))
    os.makedirs(img, exist_ok=True)
    path = os.path.join(img, name + ".png")
    # No date or software version in the file: the same figure gives the same bytes.
    fig.savefig(path, dpi=110, bbox_inches="tight", metadata={"Software": None})
    return path
