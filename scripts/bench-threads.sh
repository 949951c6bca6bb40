#!/usr/bin/env bash
# Thread scaling on a large model (issue 32): the 108k-DOF 2-D sector with 500 contacts
# (`ewr model example sector --refine 4 --contacts 500`), a 21-point FRC at odd:7 on 100
# modes from 3142 to 3841 without peak refinement, run with each thread count in turn
# (RAYON_NUM_THREADS), one process each. Prints a Markdown table: wall time, CPU time
# (user + system), speed-up against the first thread count, and the process's own report of
# where the time went (`--profile`, per phase) beside it in OUT/profile-<threads>.txt.
#
#     bash scripts/bench-threads.sh                      # 1 and 2 threads, builds the binary
#     THREADS="1 2 8 16" bash scripts/bench-threads.sh   # a workstation
#     SIZE=quick bash scripts/bench-threads.sh           # --refine 1 --contacts 50: seconds
#
# On a machine without Rust or HDF5: `bash scripts/pack-bench.sh DIR` copies the release
# binary, its shared libraries, glibc's loader and this script into DIR; there
#
#     THREADS="1 2 8 16" bash DIR/bench-threads.sh
#
# runs the binary through the copied loader (it needs bash and coreutils only). Timings are
# wall-clock: compare the rows of one run, on one machine, not runs.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
threads=${THREADS:-"1 2"}
size=${SIZE:-full}
out=${BENCH_OUT:-$PWD/bench-threads-out}
mkdir -p "$out"

if [[ -x "$here/ewr" && -d "$here/lib" ]]; then
    # A packed folder: the binary with its libraries and loader beside it.
    ewr=("$here/lib/ld-linux-x86-64.so.2" --library-path "$here/lib" "$here/ewr")
elif [[ -n "${EWR:-}" ]]; then
    ewr=("$EWR")
else
    (cd "$here/.." && bash scripts/setup.sh && cargo build --release -q -p ewr-cli)
    ewr=("$here/../target/release/ewr")
fi

case "$size" in
    full) refine=4 contacts=500 ;;
    quick) refine=1 contacts=50 ;;
    *) echo "SIZE must be full or quick, not $size" >&2; exit 2 ;;
esac
model="$out/sector-r$refine-c$contacts.h5"
if [[ ! -s "$model" ]]; then
    echo "bench-threads: writing the sector model (refine $refine, $contacts contacts)" >&2
    "${ewr[@]}" model example sector --refine "$refine" --contacts "$contacts" -o "$model" >/dev/null
fi
sweep=(frc "$model" --harmonics odd:7 --receptance modal:100 --omega-start 3142
       --omega-end 3841 --step 34.95 --no-refine --profile --json)

echo "sector, refine $refine, $contacts contacts, 21 points odd:7 modal:100 ($(nproc) cores here)"
echo
echo "| threads | wall s | CPU s | CPU / wall | speed-up | Newton iterations | points | failed | peak MB |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
first=""
for t in $threads; do
    status=0
    # bash's own `time`: wall, and the child's user and system CPU seconds.
    TIMEFORMAT="%R %U %S"
    { time RAYON_NUM_THREADS=$t "${ewr[@]}" "${sweep[@]}" >"$out/frc-$t.json" \
        2>"$out/profile-$t.txt" || status=$?; } 2>"$out/time-$t"
    read -r wall user sys <"$out/time-$t"
    if [[ $status -ge 2 ]]; then
        echo "| $t | failed (exit $status): see $out/profile-$t.txt | | | | | | | |"
        continue
    fi
    cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.1f", u + s }')
    [[ -z "$first" ]] && first=$wall
    ratio=$(awk -v c="$cpu" -v w="$wall" 'BEGIN { printf "%.2f", c / w }')
    speed=$(awk -v a="$first" -v b="$wall" 'BEGIN { printf "%.2f", a / b }')
    # Top-level fields of the pretty-printed JSON (two-space indent).
    field() { grep -E "^  \"$1\": " "$out/frc-$t.json" | sed -E 's/.*: ([0-9.]+).*/\1/' || echo "?"; }
    mem=$(awk -v m="$(field peak_memory_mb)" 'BEGIN { printf "%.0f", m }')
    echo "| $t | $wall | $cpu | $ratio | $speed | $(field iterations) | $(field points) | $(field failed_points) | $mem |"
done
echo
echo "Per-phase wall and CPU time of each run: $out/profile-<threads>.txt"
