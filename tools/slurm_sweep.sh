#!/usr/bin/env bash
# A pipesim sweep on a Slurm cluster: one job-array task per shard
# (`pipesim sweep ... --shard K/N`), then one job that joins the shards with
# `pipesim merge` once every array task succeeded. The shards write to a
# shared directory; a task that is requeued or re-run continues its shard
# (--resume) instead of starting over.
#
#   bash tools/slurm_sweep.sh submit OUT N [sweep arguments...]
#       e.g. bash tools/slurm_sweep.sh submit /scratch/$USER/mismatch 16 \
#                configs/sweeps/state_mismatch.json --seeds 100
#       submits `sbatch --array=1-N` of this script (mode "shard"), then
#       `sbatch --dependency=afterok:<array job>` of this script (mode "merge").
#       The result is OUT/merged (sweep.json, points.jsonl, summary.csv), as
#       one machine would have written it; shards are in OUT/shard-K.
#   bash tools/slurm_sweep.sh shard OUT [sweep arguments...]
#       one array task: shard $SLURM_ARRAY_TASK_ID of $SLURM_ARRAY_TASK_COUNT
#   bash tools/slurm_sweep.sh merge OUT
#
# The pipesim binary is $PIPESIM, else `pipesim` on PATH; every node must be
# able to run it. Paths must be valid on the compute nodes (a shared file
# system). Adapt the #SBATCH lines (partition, account, time) to your site;
# options given to sbatch by `submit` override them.
#
#SBATCH --job-name=pipesim-sweep
#SBATCH --cpus-per-task=4
#SBATCH --time=04:00:00
#SBATCH --output=slurm-%x-%A_%a.out
set -euo pipefail

PIPESIM=${PIPESIM:-pipesim}
mode=${1:-}
out=${2:-}
if [ -z "$mode" ] || [ -z "$out" ]; then
  echo "usage: slurm_sweep.sh submit OUT N [sweep args...] | shard OUT [sweep args...] | merge OUT" >&2
  exit 2
fi
shift 2

case "$mode" in
  submit)
    shards=${1:?submit needs the number of shards N}
    shift
    mkdir -p "$out"
    # An absolute path, so that sbatch finds the script from any directory.
    script=$(readlink -f "$0")
    array_job=$(sbatch --parsable --array="1-$shards" --export=ALL "$script" shard "$out" "$@")
    array_job=${array_job%%;*}  # --parsable prints "jobid[;cluster]"
    merge_job=$(sbatch --parsable --dependency="afterok:$array_job" --cpus-per-task=1 \
                       --job-name=pipesim-merge --export=ALL "$script" merge "$out")
    echo "submitted shards as job array $array_job (1-$shards) and the merge as job ${merge_job%%;*}"
    echo "result: $out/merged"
    ;;
  shard)
    k=${SLURM_ARRAY_TASK_ID:?shard mode runs inside a Slurm array task (SLURM_ARRAY_TASK_ID)}
    # SLURM_ARRAY_TASK_COUNT is the number of tasks in the array (Slurm 18.08+).
    n=${SLURM_ARRAY_TASK_COUNT:?SLURM_ARRAY_TASK_COUNT is not set (Slurm 18.08 or newer sets it)}
    exec "$PIPESIM" sweep "$@" --shard "$k/$n" --out "$out/shard-$k" --resume \
         --threads "${SLURM_CPUS_PER_TASK:-1}"
    ;;
  merge)
    exec "$PIPESIM" merge "$out"/shard-* --out "$out/merged"
    ;;
  *)
    echo "slurm_sweep.sh: unknown mode \"$mode\" (submit, shard or merge)" >&2
    exit 2
    ;;
esac
