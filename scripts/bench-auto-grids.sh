#!/usr/bin/env bash
# Automatic harmonics (issue 29) on 27 sweeps against rich references: the shipped models'
# curves of docs/accuracy.md's table, the same bands by other steps, downward and wider,
# and Fig. 5 at other normal loads. Prints per sweep the largest relative error of the
# amplitude, the points above 1 % (auto's default tolerance) and the Newton iterations, for
# each binary given (side by side, to compare a change of auto's rules).
#
#     bash scripts/bench-auto-grids.sh [EWR ...]    # EWR defaults to target/release/ewr
#
# The references (odd:255 / odd:127 / odd:63 / all:127 / all:63, the first binary's) take
# about 5 minutes on 2 cores; with REF_DIR set they are kept there, and a rerun skips them.
set -euo pipefail
bins=()
for b in "$@"; do bins+=("$(readlink -f "$b")"); done
cd "$(dirname "$0")/.."
[ ${#bins[@]} -gt 0 ] || bins=("$(readlink -f target/release/ewr)")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ref_dir=${REF_DIR:-$tmp/ref}
mkdir -p "$ref_dir"
curves=(
  "fig5|oscillator-2d|0.05 1.5 0.005|--mu-n 8|odd:255"
  "tmd|two-mass-damper|0.3 1.2 0.01||odd:255"
  "bdb|blade-damper-blade|1150 1400 2||odd:127"
  "wedge|wedge-damper-3d|1150 1400 5||all:63"
  "disk|bladed-disk|0.9 1.9 0.01||odd:127"
  "chain|chain|0.04 0.2 0.002||odd:63"
  "sc3d|single-contact-3d|1 10 0.05||all:127"
  "bdb3d|blade-damper-blade-3d|1000 1500 5||all:63"
  "fig5s|oscillator-2d|0.05 1.5 0.0035|--mu-n 8|odd:255"
  "fig5m|oscillator-2d|0.05 1.5 0.0035|--mu-n 5|odd:255"
  "fig5d|oscillator-2d|1.5 0.05 0.005|--mu-n 8|odd:255"
  "fig5h|oscillator-2d|0.05 1.5 0.006|--mu-n 12|odd:255"
  "tmds|two-mass-damper|0.3 1.2 0.007||odd:255"
  "tmdl|two-mass-damper|0.3 2.5 0.013||odd:255"
  "tmdd|two-mass-damper|1.2 0.3 0.01||odd:255"
  "bdbs|blade-damper-blade|1150 1400 3||odd:127"
  "bdbl|blade-damper-blade|1000 1500 1.3||odd:127"
  "bdbd|blade-damper-blade|1400 1150 2.5||odd:127"
  "wedges|wedge-damper-3d|1150 1400 3||all:63"
  "wedgel|wedge-damper-3d|1100 1450 7||all:63"
  "wedged|wedge-damper-3d|1400 1150 4||all:63"
  "chains|chain|0.04 0.2 0.003||odd:63"
  "chainl|chain|0.04 0.2 0.0015||odd:63"
  "sc3dl|single-contact-3d|1 10 0.07||all:127"
  "bdb3ds|blade-damper-blade-3d|1000 1500 7||all:63"
  "bdb3dl|blade-damper-blade-3d|1000 1500 2||all:63"
  "bdb3dd|blade-damper-blade-3d|1500 1000 5||all:63"
)
header="sweep   "
for b in "${bins[@]}"; do header+=" | $(basename "$b"): max err, >1 %, Newton"; done
echo "$header"
for c in "${curves[@]}"; do
  IFS='|' read -r name model band extra rich <<<"$c"
  read -r w0 w1 dw <<<"$band"
  # shellcheck disable=SC2086
  args=(frc "models/$model.h5" --omega-start "$w0" --omega-end "$w1" --step "$dw" $extra --no-refine)
  # A reference is kept only once its sweep has finished (exit 0: every point converged).
  if [ ! -s "$ref_dir/$name.csv" ] &&
    "${bins[0]}" "${args[@]}" --harmonics "$rich" --csv "$tmp/ref.csv" >/dev/null 2>&1; then
    mv "$tmp/ref.csv" "$ref_dir/$name.csv"
  fi
  line=$(printf '%-8s' "$name")
  for b in "${bins[@]}"; do
    rm -f "$tmp/auto.csv"
    "$b" "${args[@]}" --harmonics auto --csv "$tmp/auto.csv" >/dev/null 2>&1 || true
    line+=" | $(python3 - "$ref_dir/$name.csv" "$tmp/auto.csv" <<'PY' || echo "(failed)"
import csv, sys
try:
    ref = {round(float(x["omega"]), 9): float(x["amp_norm"])
           for x in csv.DictReader(open(sys.argv[1])) if x["converged"] == "1"}
    rows = list(csv.DictReader(open(sys.argv[2])))
    e = [abs(float(x["amp_norm"]) - ref[w]) / ref[w]
         for x in rows if x["converged"] == "1"
         for w in [round(float(x["omega"]), 9)] if w in ref and ref[w] > 0]
    its = sum(int(x["iterations"]) for x in rows)
    # Points of the sweep that were not compared (not converged, or not on the reference).
    missed = len(rows) - len(e)
    print(f"{100 * max(e):7.3f} % {sum(v > 0.01 for v in e):3d} {its:6d}"
          + (f" ({missed} not compared)" if missed else ""))
except (OSError, ValueError, KeyError):
    print("(failed)")
PY
)"
  done
  echo "$line"
done
