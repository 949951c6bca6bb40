#!/bin/bash
# One task of a Slurm job array running a share of an ewr study (docs/study.md).
#
#   sbatch --array=1-8 scripts/slurm/study-array.sh STUDY.toml OUT.h5
#
# Task I of N runs every N-th case into OUT.shard-I-of-N.h5 (ewr reads SLURM_ARRAY_TASK_ID,
# SLURM_ARRAY_TASK_COUNT and SLURM_ARRAY_TASK_MIN; the array must be contiguous, step 1),
# keeping each finished case in OUT.shard-I-of-N.h5.cases/: a task that is killed or
# requeued resumes where it stopped. Then combine the shards (scripts/slurm/merge.sh, or
# scripts/slurm/submit.sh for both steps). Set EWR to the ewr binary if it is not on PATH.
#SBATCH --job-name=ewr-study
#SBATCH --cpus-per-task=1
#SBATCH --output=ewr-study-%A_%a.out
#SBATCH --requeue
set -euo pipefail
if [ $# -ne 2 ]; then
    echo "usage: sbatch --array=1-N $0 STUDY.toml OUT.h5" >&2
    exit 2
fi
exec "${EWR:-ewr}" study "$1" -o "$2" --jobs "${SLURM_CPUS_PER_TASK:-1}"
