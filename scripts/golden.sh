#!/usr/bin/env bash
# Golden outputs for refactors that must not change results: runs a fixed set of `ewr`
# commands on the shipped models (solve, frc with every option that reaches the sweep driver,
# resume, peaks, studies) and keeps every file they write and their JSON summaries.
#
#     bash scripts/golden.sh DIR [EWR]      # EWR defaults to target/release/ewr
#     python3 scripts/golden_compare.py OLD_DIR NEW_DIR
#
# Run it before and after the change with the two binaries; the comparison reads the HDF5
# files dataset by dataset and attribute by attribute (h5py), the CSV files byte by byte, and
# the JSON summaries without their timings. Takes about two minutes on two cores.
set -uo pipefail
out=${1:?usage: golden.sh DIR [EWR]}
ewr=${2:-target/release/ewr}
ewr=$(readlink -f "$ewr")
cd "$(dirname "$0")/.."
rm -rf "$out"
mkdir -p "$out"
status=0
run() {
  local name=$1
  shift
  "$ewr" "$@" >"$out/$name.stdout" 2>"$out/$name.stderr"
  echo "$?" >"$out/$name.rc"
}
M=models
# One periodic solution per shipped model, as JSON, result file and time series.
run solve-osc "solve" "$M/oscillator-2d.h5" --omega 0.17 --harmonics odd:59 --json -o "$out/solve-osc.h5" --timeseries "$out/solve-osc.csv"
run solve-osc-auto "solve" "$M/oscillator-2d.h5" --omega 1.0 --harmonics odd:5 --rho auto --json -o "$out/solve-osc-auto.h5"
run solve-1d "solve" "$M/two-dof-1d.h5" --omega 0.308 --json -o "$out/solve-1d.h5" --timeseries "$out/solve-1d.csv"
run solve-tmd "solve" "$M/two-mass-damper.h5" --omega 0.303 --json -o "$out/solve-tmd.h5"
run solve-bdb "solve" "$M/blade-damper-blade.h5" --omega 1.0 --harmonics odd:15 --json -o "$out/solve-bdb.h5"
run solve-3d "solve" "$M/single-contact-3d.h5" --omega 3.0 --harmonics all:15 --json -o "$out/solve-3d.h5" --timeseries "$out/solve-3d.csv"
run solve-wedge "solve" "$M/wedge-damper-3d.h5" --omega 1.0 --harmonics all:15 --json -o "$out/solve-wedge.h5"
run solve-bdb3d "solve" "$M/blade-damper-blade-3d.h5" --omega 1.0 --harmonics all:15 --json -o "$out/solve-bdb3d.h5"
run solve-disk "solve" "$M/bladed-disk.h5" --omega 1.0 --harmonics odd:7 --json -o "$out/solve-disk.h5"
run solve-chain "solve" "$M/chain.h5" --omega 1.0 --harmonics odd:7 --linear matrix-free --json -o "$out/solve-chain.h5"
run solve-chain-h "solve" "$M/chain.h5" --omega 1.0 --harmonics odd:7 --linear matrix-free --preconditioner harmonic --json
run solve-law "solve" "$M/oscillator-2d.h5" --omega 0.5 --harmonics odd:15 --law tanh:50 --json
# Frequency response curves: the README main job, several bounds in parallel, arclength,
# adaptive steps, 3-D contacts, a cyclic sector, an FE model.
run frc-main "frc" "$M/oscillator-2d.h5" --omega-start 0.05 --omega-end 1.5 --step 0.005 --mu-n 0,5,8,10,12 --csv "$out/frc-main.csv" -o "$out/frc-main.h5" --json
run frc-arc "frc" "$M/oscillator-2d.h5" --omega-start 0.2 --omega-end 2.0 --step 0.02 --harmonics odd:15 --continuation arclength --csv "$out/frc-arc.csv" -o "$out/frc-arc.h5" --json
run frc-adapt "frc" "$M/two-mass-damper.h5" --omega-start 0.2 --omega-end 2.6 --step 0.02 --harmonics odd:15 --adaptive --mu-n 4 --csv "$out/frc-adapt.csv" -o "$out/frc-adapt.h5" --json
run frc-down "frc" "$M/two-dof-1d.h5" --omega-start 1.5 --omega-end 0.2 --step 0.01 --harmonics odd:15 --csv "$out/frc-down.csv" --json
run frc-3d "frc" "$M/single-contact-3d.h5" --omega-start 1 --omega-end 10 --step 0.1 --harmonics all:15 --csv "$out/frc-3d.csv" -o "$out/frc-3d.h5" --json
run frc-3d-arc "frc" "$M/single-contact-3d.h5" --omega-start 1 --omega-end 20 --step 0.05 --harmonics all:15 --continuation arclength --csv "$out/frc-3d-arc.csv" --json
run frc-bdb3d "frc" "$M/blade-damper-blade-3d.h5" --omega-start 0.8 --omega-end 1.3 --step 0.01 --harmonics all:15 --csv "$out/frc-bdb3d.csv" -o "$out/frc-bdb3d.h5" --json
run frc-wedge "frc" "$M/wedge-damper-3d.h5" --omega-start 0.5 --omega-end 1.5 --step 0.02 --harmonics all:15 --csv "$out/frc-wedge.csv" --json
run frc-disk "frc" "$M/bladed-disk.h5" --omega-start 0.8 --omega-end 1.4 --step 0.01 --harmonics odd:7 --csv "$out/frc-disk.csv" -o "$out/frc-disk.h5" --json
run frc-ccx "frc" "$M/blade-ccx.h5" --omega-start 5000 --omega-end 6000 --step 20 --harmonics odd:7 --rho auto --csv "$out/frc-ccx.csv" --json
run frc-chain "frc" "$M/chain.h5" --omega-start 0.8 --omega-end 1.2 --step 0.02 --harmonics odd:7 --linear matrix-free --csv "$out/frc-chain.csv" --json
# Resume: a finished sweep's file resumed must give the same curve.
run frc-resume "frc" "$M/two-mass-damper.h5" --omega-start 0.2 --omega-end 0.6 --step 0.02 --harmonics odd:15 --mu-n 4 -o "$out/frc-resume0.h5" --json
cp "$out/frc-resume0.h5" "$out/frc-resume1.h5"
run frc-resume1 "frc" "$M/two-mass-damper.h5" --omega-start 0.2 --omega-end 0.8 --step 0.02 --harmonics odd:15 --mu-n 4 -o "$out/frc-resume1.h5" --resume --json
# Peak tracking.
run peaks-mun "peaks" "$M/two-mass-damper.h5" --param mu_n --from 2 --to 20 --count 6 --omega-start 0.3 --omega-end 2.0 --step 0.02 --harmonics odd:15 -o "$out/peaks-mun.h5" --csv "$out/peaks-mun.csv" --json
run peaks-mass "peaks" "$M/two-mass-damper.h5" --param mass:u21 --from 0.25 --to 1 --count 4 --omega-start 0.3 --omega-end 1.2 --step 0.02 --harmonics odd:15 --csv "$out/peaks-mass.csv" --json
run peaks-mu "peaks" "$M/blade-damper-blade-3d.h5" --param mu --from 0.1 --to 0.5 --count 3 --omega-start 0.8 --omega-end 1.3 --step 0.02 --harmonics all:7 --csv "$out/peaks-mu.csv" --json
# Studies.
run study-damper "study" "$M/damper-study.toml" -o "$out/study-damper.h5"
run study-opt "study" "$M/damper-optimum.toml" -o "$out/study-opt.h5"
echo "golden outputs in $out"
exit $status
