#!/bin/bash
# Runs an ewr study as a Slurm job array of N tasks plus a merge job that starts when every
# task has ended (whatever its exit code: failed cases are recorded, and the merge itself
# checks that no case is missing). Prints the two job ids; with --wait, waits for the merge
# and exits with its status.
#
#   scripts/slurm/submit.sh [--wait] STUDY.toml OUT.h5 N [extra sbatch options...]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
wait_opt=()
if [ "${1:-}" = --wait ]; then wait_opt=(--wait); shift; fi
if [ $# -lt 3 ]; then
    echo "usage: $0 [--wait] STUDY.toml OUT.h5 N [sbatch options...]" >&2
    exit 2
fi
study=$1 out=$2 n=$3
shift 3
array=$(sbatch --parsable "$@" --array="1-$n" "$here/study-array.sh" "$study" "$out")
array=${array%%;*}
echo "array job $array ($n tasks)" >&2
merge=$(sbatch --parsable "$@" "${wait_opt[@]}" --dependency="afterany:$array" \
    "$here/merge.sh" "$out" "$n") || { echo "merge job failed" >&2; exit 1; }
echo "merge job ${merge%%;*}" >&2
