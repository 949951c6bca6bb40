#!/bin/bash
# Merge step of a sharded ewr study: combines OUT.shard-*-of-N.h5 into OUT.h5 (plus OUT.csv
# and the figures), failing (exit 2) if a case is missing or duplicated.
#
#   scripts/slurm/merge.sh OUT.h5 N              # directly, or as a dependent Slurm job:
#   sbatch --dependency=afterany:JOBID --wrap "scripts/slurm/merge.sh OUT.h5 N"
#SBATCH --job-name=ewr-study-merge
#SBATCH --output=ewr-study-merge-%j.out
set -euo pipefail
if [ $# -ne 2 ]; then
    echo "usage: $0 OUT.h5 N" >&2
    exit 2
fi
out=$1 n=$2
shards=()
for i in $(seq 1 "$n"); do
    shards+=("${out%.h5}.shard-$i-of-$n.h5")
done
exec "${EWR:-ewr}" study merge "${shards[@]}" -o "$out"
