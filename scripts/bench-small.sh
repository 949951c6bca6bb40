#!/usr/bin/env bash
# Speed on small models (issue 18): every job run as a user runs it, one `ewr` process per
# job, with RAYON_NUM_THREADS=1 and 2. Prints a Markdown table:
#   wall and CPU (user + system) time per process (s) with 1 and 2 threads (CPU time shows
#   what threads cost whatever the load of the machine), Newton iterations, the in-process kernel
#   time the command reports itself (`elapsed_s` of --json: the solve or the sweep, without
#   process start, model loading and the final result files), and wall / kernel.
# Then the same 2-threads-vs-1 check on a short sweep of every shipped model (models/*.h5;
# BENCH_MODELS=0 skips it).
#
# Usage: bash scripts/bench-small.sh [EWR_BINARY]   (default: builds target/release/ewr)
# Timings are wall-clock on a shared machine: compare rows of one run, not runs.
set -euo pipefail
cd "$(dirname "$0")/.."
ewr=${1:-}
if [[ -z "$ewr" ]]; then
    cargo build --release -q -p ewr-cli
    ewr=target/release/ewr
fi
out=${BENCH_OUT:-target/bench-small}
mkdir -p "$out"
# The Table 1 and Fig. 21 models (forcing at 3w on the second DOF) are not shipped.
if [[ ! -f "$out/table1.h5" || ! -f "$out/fig21.h5" ]]; then
    cargo run --release -q -p ewr-solve --example paper_models -- "$out" >/dev/null
fi

# run NAME ARGS...: one line of the table.
run() {
    local name=$1
    shift
    local iters="" kernel=""
    local walls=() cpus=()
    for t in 1 2; do
        local json status=0
        json=$(RAYON_NUM_THREADS=$t /usr/bin/time -o "$out/time" -f "%e %U %S" "$ewr" "$@" --json 2>/dev/null) || status=$?
        # Exit 1 (some point did not converge) is still a timing; 2 is refused input.
        if [[ $status -ge 2 ]]; then
            echo "| $name | failed (exit $status) | | | | | | |"
            return
        fi
        read -r wall user sys < <(tail -1 "$out/time")
        walls+=("$wall")
        cpus+=("$(python3 -c "print('%.2f' % ($user + $sys))")")
        if [[ $t == 1 ]]; then
            iters=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["iterations"])' <<<"$json")
            kernel=$(python3 -c 'import json,sys; print("%.3f" % json.load(sys.stdin)["elapsed_s"])' <<<"$json")
        fi
    done
    local ratio
    ratio=$(python3 -c "print('%.2f' % (${walls[0]} / max($kernel, 1e-3)))")
    echo "| $name | ${walls[0]} | ${walls[1]} | ${cpus[0]} | ${cpus[1]} | $iters | $kernel | $ratio |"
}

header() {
    echo "| $1 | wall s, 1 thread | wall s, 2 threads | CPU s, 1 thread | CPU s, 2 threads | Newton iterations | kernel s (1 thread) | wall / kernel |"
    echo "|---|---:|---:|---:|---:|---:|---:|---:|"
}

header job
run "README main job (5 curves, step 0.005, CSV + PNG)" \
    frc models/oscillator-2d.h5 --omega-start 0.05 --omega-end 1.5 --step 0.005 \
    --mu-n 0,5,8,10,12 --csv "$out/frc.csv" --plot "$out/frc.png"
run "Fig. 5, one curve (mu N = 8, odd:59, step 0.001)" \
    frc models/oscillator-2d.h5 --harmonics odd:59 --omega-start 0.001 --omega-end 1.5 \
    --step 0.001 --mu-n 8
run "Fig. 5, five curves (one process)" \
    frc models/oscillator-2d.h5 --harmonics odd:59 --omega-start 0.001 --omega-end 1.5 \
    --step 0.001 --mu-n 0,5,8,10,12
run "Table 1 point (odd:199, 4096 samples)" \
    solve "$out/table1.h5" --omega 0.1 --harmonics odd:199 --samples 4096
run "Fig. 21 point (odd:1799, 16384 samples)" \
    solve "$out/fig21.h5" --omega 0.115 --harmonics odd:1799 --samples 16384

[[ "${BENCH_MODELS:-1}" == 0 ]] && exit 0
echo
echo "Shipped models, 51-point sweep from 0.5 to 1.5 times the first natural frequency, odd:59 (all:15 for models with static loads or 3-D contacts):"
echo
header model
for m in models/*.h5; do
    w1=$("$ewr" model info "$m" --modes 1 --json 2>/dev/null |
        python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["natural_frequencies"][0])' 2>/dev/null) || w1=""
    [[ -z "$w1" ]] && continue
    a=$(python3 -c "print(0.5 * $w1)")
    b=$(python3 -c "print(1.5 * $w1)")
    s=$(python3 -c "print($w1 / 50)")
    # Static loads and 3-D contacts need the mean (h = 0): all:15 where odd:59 is refused.
    h=odd:59
    "$ewr" frc "$m" --omega-start "$a" --omega-end "$a" --step "$s" --no-refine >/dev/null 2>&1 || h=all:15
    run "$(basename "$m") ($h)" frc "$m" --omega-start "$a" --omega-end "$b" --step "$s" --harmonics "$h"
done
