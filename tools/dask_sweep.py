#!/usr/bin/python3
"""Run a pipesim sweep on a Dask cluster, then join it with `pipesim merge`.

    /usr/bin/python3 tools/dask_sweep.py [--scheduler tcp://host:8786] [--workers 2]
        [--shards N] [--threads-per-task T] [--pipesim PATH] [--resume] --out DIR
        -- SWEEP_ARGS...

SWEEP_ARGS are those of `pipesim sweep` (config, --grid, --seeds, --set, --per-seed),
without --out, --shard, --resume, --threads. The driver
  1. asks `pipesim sweep SWEEP_ARGS --dry-run` how many points there are (this also
     checks every point before anything is submitted);
  2. submits one task per shard K/N (N = --shards, default: one shard per point) to the
     scheduler given by --scheduler, or to a LocalCluster of --workers processes;
     each task runs `pipesim sweep SWEEP_ARGS --shard K/N` in a scratch directory on
     its worker and returns the files, so the workers need the pipesim binary (same
     path, or --pipesim) but no shared file system;
  3. writes each finished shard to DIR.shards/K-of-N as it arrives (renamed into
     place whole), so a driver that is stopped and started again with --resume only
     submits the shards still missing;
  4. runs `pipesim merge DIR.shards/* --out DIR`: DIR then holds exactly what
     `pipesim sweep SWEEP_ARGS --out DIR` writes on one machine; DIR.shards is removed
     unless --keep-shards.

Run it with Debian's /usr/bin/python3 (python3-distributed); the python3 first on
PATH may be another build that does not see Debian's packages.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

SHARD_FILES = ("sweep.json", "points.jsonl", "seeds.jsonl", "summary.csv")


def find_pipesim(given):
    """The pipesim binary: --pipesim, $PIPESIM, pipesim on PATH, or this checkout's build."""
    if given:
        return os.path.abspath(given)
    if os.environ.get("PIPESIM"):
        return os.path.abspath(os.environ["PIPESIM"])
    on_path = shutil.which("pipesim")
    if on_path:
        return on_path
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for build in ("build", "build-release", "build-test"):
        candidate = os.path.join(root, build, "pipesim")
        if os.access(candidate, os.X_OK):
            return candidate
    sys.exit("dask_sweep: no pipesim binary: give --pipesim PATH or set PIPESIM")


def run_shard(pipesim, sweep_args, k, n, threads):
    """Runs on a Dask worker: shard k of n in a scratch directory; returns its files."""
    import os
    import shutil
    import subprocess
    import tempfile

    scratch = tempfile.mkdtemp(prefix="pipesim-shard-")
    try:
        out = os.path.join(scratch, "out")
        cmd = [pipesim, "sweep", *sweep_args, "--shard", f"{k}/{n}", "--out", out, "--threads", str(threads)]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"shard {k}/{n} failed (exit {done.returncode}): {' '.join(cmd)}\n{done.stderr}")
        files = {}
        for name in SHARD_FILES:
            path = os.path.join(out, name)
            if os.path.exists(path):
                with open(path, "rb") as f:
                    files[name] = f.read()
        return files
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def give_up(shards_dir, failure):
    """Ends a failed run: keeps the finished shards for --resume, or removes an empty DIR.shards."""
    print(f"dask_sweep: {str(failure).strip()}", file=sys.stderr)
    for name in os.listdir(shards_dir):
        if name.startswith("."):  # a shard being stored when it failed: never whole
            shutil.rmtree(os.path.join(shards_dir, name), ignore_errors=True)
    kept = os.listdir(shards_dir)
    if not kept:
        os.rmdir(shards_dir)
        sys.exit(1)
    sys.exit(f"dask_sweep: {len(kept)} finished shard(s) kept in {shards_dir}: the same command with --resume "
             f"runs only the others (remove {shards_dir} to start over)")


def store_shard(shards_dir, k, n, files):
    """Writes a returned shard to shards_dir/K-of-N, whole or not at all."""
    final = os.path.join(shards_dir, f"{k}-of-{n}")
    partial = tempfile.mkdtemp(prefix=f".{k}-of-{n}.", dir=shards_dir)
    for name, data in files.items():
        with open(os.path.join(partial, name), "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
    os.rename(partial, final)


def main():
    parser = argparse.ArgumentParser(
        description="Run `pipesim sweep` as shards on a Dask cluster and merge them.",
        usage="%(prog)s [options] --out DIR -- SWEEP_ARGS...")
    parser.add_argument("--scheduler", help="Dask scheduler address, e.g. tcp://host:8786 (default: a LocalCluster)")
    parser.add_argument("--workers", type=int, default=2, help="LocalCluster worker processes (default 2)")
    parser.add_argument("--shards", type=int, help="number of shards (default: one per point)")
    parser.add_argument("--threads-per-task", type=int, default=1, help="pipesim --threads of each task (default 1)")
    parser.add_argument("--pipesim", help="pipesim binary, at this path on every worker")
    parser.add_argument("--out", required=True, help="output directory (as `pipesim sweep --out`)")
    parser.add_argument("--resume", action="store_true", help="keep the shards already in OUT.shards")
    parser.add_argument("--keep-shards", action="store_true", help="keep OUT.shards after the merge")
    parser.add_argument("sweep_args", nargs=argparse.REMAINDER, help="-- then the `pipesim sweep` arguments")
    args = parser.parse_args()
    sweep_args = args.sweep_args[1:] if args.sweep_args[:1] == ["--"] else args.sweep_args
    for forbidden in ("--out", "--shard", "--resume", "--threads"):
        if any(a == forbidden or a.startswith(forbidden + "=") for a in sweep_args):
            parser.error(f"{forbidden} is the driver's business: leave it out of the sweep arguments")
    pipesim = find_pipesim(args.pipesim)

    dry = subprocess.run([pipesim, "sweep", *sweep_args, "--dry-run"], capture_output=True, text=True)
    if dry.returncode != 0:
        sys.stderr.write(dry.stderr)
        sys.exit(dry.returncode)
    points = len(dry.stdout.splitlines())
    n = args.shards or points
    if n < 1:
        parser.error("--shards must be at least 1")

    shards_dir = os.path.normpath(args.out) + ".shards"
    if os.path.isdir(shards_dir) and os.listdir(shards_dir) and not args.resume:
        sys.exit(f"dask_sweep: {shards_dir} already holds shards: pass --resume to keep them, or choose another --out")
    os.makedirs(shards_dir, exist_ok=True)
    todo = [k for k in range(1, n + 1) if not os.path.isdir(os.path.join(shards_dir, f"{k}-of-{n}"))]

    from distributed import Client, LocalCluster, as_completed

    cluster = None
    if args.scheduler:
        client = Client(args.scheduler)
    else:
        cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                               dashboard_address=None)
        client = Client(cluster)
    where = args.scheduler or f"a LocalCluster of {args.workers} workers"
    print(f"dask_sweep: {points} points in {n} shards, {len(todo)} to run on {where}", file=sys.stderr)
    failure = None
    try:
        futures = {client.submit(run_shard, pipesim, sweep_args, k, n, args.threads_per_task,
                                 key=f"pipesim-shard-{k}-of-{n}", pure=False): k for k in todo}
        finished = n - len(todo)
        for future in as_completed(futures):
            k = futures[future]
            store_shard(shards_dir, k, n, future.result())
            finished += 1
            print(f"dask_sweep: shard {k}/{n} done ({finished}/{n})", file=sys.stderr)
    except Exception as e:  # a shard failed, or the cluster went away
        failure = e
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    if failure is not None:
        give_up(shards_dir, failure)

    parts = [os.path.join(shards_dir, f"{k}-of-{n}") for k in range(1, n + 1)]
    merged = subprocess.run([pipesim, "merge", *parts, "--out", args.out])
    if merged.returncode != 0:
        sys.exit(merged.returncode)
    if not args.keep_shards:
        shutil.rmtree(shards_dir)
    print(f"dask_sweep: merged into {args.out} (sweep.json, points.jsonl, summary.csv)", file=sys.stderr)


if __name__ == "__main__":
    main()
