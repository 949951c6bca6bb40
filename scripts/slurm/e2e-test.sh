#!/bin/bash
# End-to-end test of a sharded study on a real Slurm: starts a throwaway single-node cluster
# on localhost (slurm-local.sh: Debian's munge, slurmctld, slurmd, slurm-client, installed
# with apt if missing), submits models/damper-study.toml as a 4-task job array plus the merge
# job (submit.sh), and checks that the merged result equals a single-process run byte for
# byte (HDF5 and summary CSV). Exit 0 on success, non-zero on any failure or mismatch.
#
#   bash scripts/slurm/e2e-test.sh          # as root, or with passwordless sudo
#
# Uses $EWR if set (CI passes the binary its test build made), else target/release/ewr (built
# first). Takes about a minute on 2 cores (plus ~15 s for the packages the first time).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
export PATH="$PATH:/usr/sbin:/sbin"
if [ -z "${EWR:-}" ]; then
    cargo build --release -q -p ewr-cli
    EWR="$root/target/release/ewr"
fi
export EWR

work=$(mktemp -d /tmp/ewr-slurm-e2e.XXXXXX)
chmod 755 "$work"
tasks=4

if [ "$(id -u)" = 0 ]; then
    # shellcheck source=slurm-local.sh
    source scripts/slurm/slurm-local.sh
    export SLURM_LOCAL_CPUS=${SLURM_LOCAL_CPUS:-$tasks}
    cleanup() { slurm_local_stop || true; rm -rf "$work"; }
    trap cleanup EXIT
    slurm_local_start
else
    eval "$(sudo env SLURM_LOCAL_CPUS="${SLURM_LOCAL_CPUS:-$tasks}" bash scripts/slurm/slurm-local.sh start)"
    cleanup() { sudo bash scripts/slurm/slurm-local.sh stop "$SLURM_LOCAL_DIR" || true; rm -rf "$work"; }
    trap cleanup EXIT
fi

study="$root/models/damper-study.toml"
echo "== single process"
"$EWR" study "$study" -o "$work/single.h5" --no-plot --jobs 2 >"$work/single.log"
tail -n 2 "$work/single.log"

echo "== Slurm: $tasks-task job array + merge job"
t0=$SECONDS
(cd "$work" && timeout 600 bash "$root/scripts/slurm/submit.sh" --wait "$study" "$work/slurm.h5" "$tasks") || {
    rc=$?
    echo "e2e: the Slurm jobs failed (exit $rc)" >&2
    for f in "$work"/ewr-study-*.out; do echo "--- $f" >&2; tail -n 20 "$f" >&2; done
    exit 1
}
echo "jobs done in $((SECONDS - t0)) s"
for i in $(seq 1 "$tasks"); do
    test -s "$work/slurm.shard-$i-of-$tasks.h5" || { echo "e2e: shard $i missing" >&2; exit 1; }
done
grep -h "merged" "$work"/ewr-study-merge-*.out

echo "== compare"
status=0
cmp "$work/single.h5" "$work/slurm.h5" || { echo "e2e: merged HDF5 differs from the single run" >&2; status=1; }
cmp "$work/single.csv" "$work/slurm.csv" || { echo "e2e: merged CSV differs from the single run" >&2; status=1; }
if [ "$status" = 0 ]; then
    echo "e2e: OK, the Slurm-merged study equals the single-process run ($(($(wc -l <"$work/single.csv") - 1)) cases)"
fi
exit "$status"
