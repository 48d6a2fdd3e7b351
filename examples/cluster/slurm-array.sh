#!/usr/bin/env bash
# A sweep in shards on a Slurm cluster: one array task per shard, each on one
# node with its GPUs (--devices all), then one job that merges the shards.
#
#   sbatch --array=0-3 examples/cluster/slurm-array.sh configs/attention.yaml
#   # when the array is done (or chain it: see the end of this file):
#   mltop merge results/attention-*.csv -o results/attention.csv --config configs/attention.yaml
#
# --shard auto reads SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_MIN and
# SLURM_ARRAY_TASK_COUNT: the array must be contiguous (0-3 or 1-4, no step).
# Every task computes the same partition from the sweep file. The tasks
# share one --claims directory on the cluster's shared filesystem (results/,
# one per array job): a task that ends its own specs early takes the others'
# unstarted ones, so the array ends together. A task that dies is
# resubmitted with the same index: --resume keeps what it wrote, and its
# claims make it run what it had claimed and not finished.
#SBATCH --job-name=mltop-sweep
#SBATCH --nodes=1
#SBATCH --gpus-per-node=8
#SBATCH --time=02:00:00
#SBATCH --output=results/%x-%A_%a.log
set -euo pipefail
SWEEP=${1:?usage: sbatch --array=0-N examples/cluster/slurm-array.sh SWEEP.yaml}
MLTOP=${MLTOP:-mltop}
name=$(basename "$SWEEP" .yaml)
mkdir -p results
# One compile cache per node (NVRTC output is keyed by source, macros and
# GPU architecture; writers go through a rename, so sharing it is safe).
export MLTOP_CUDA_CACHE=${MLTOP_CUDA_CACHE:-/tmp/mltop-cuda-cache}
# Slurm sets CUDA_VISIBLE_DEVICES to the GPUs it gave this task; --devices
# all uses exactly those, one worker each.
out="results/${name}-${SLURM_ARRAY_TASK_ID}.csv"
"$MLTOP" --config "$SWEEP" --backend cuda --devices all --shard auto --resume "$out" \
	--claims "results/${name}-claims-${SLURM_ARRAY_JOB_ID}" --quiet

# To merge automatically, submit a dependent job after the array:
#   jid=$(sbatch --parsable --array=0-3 examples/cluster/slurm-array.sh configs/attention.yaml)
#   sbatch --dependency=afterany:$jid --wrap \
#     "mltop merge results/attention-*.csv -o results/attention.csv --config configs/attention.yaml"
# merge exits 1 and lists the specs without a row when a shard is missing.
