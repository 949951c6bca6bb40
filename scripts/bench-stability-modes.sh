#!/usr/bin/env bash
# Stability and nonlinear modes (issue 30): the cost of `frc --stability` against the same
# sweep without it (best of 3, one machine, one run of this script), and the time of a
# 100-amplitude backbone (`ewr modes`) on two-mass-damper and blade-damper-blade-3d.
#
#     bash scripts/bench-stability-modes.sh [EWR]        # EWR defaults to target/release/ewr
#     LARGE=1 bash scripts/bench-stability-modes.sh      # also the 100-contact 3-D sector, one
#                                                         # run each (about a minute)
set -euo pipefail
cd "$(dirname "$0")/.."
ewr=$(readlink -f "${1:-target/release/ewr}")
best() { # command... : best wall time of 3 runs, in seconds
  local b=""
  for _ in 1 2 3; do
    local t0 t1
    t0=$(date +%s.%N)
    "$@" >/dev/null 2>&1 || true
    t1=$(date +%s.%N)
    b=$(python3 -c "print(min(float('${b:-1e9}'), $t1 - $t0))")
  done
  echo "$b"
}
printf '%-52s %10s %10s %8s\n' "frc curve" "without s" "with s" "ratio"
frc_case() { # label model args...
  local label=$1 model=$2; shift 2
  local a b
  a=$(best "$ewr" frc "models/$model.h5" "$@" --no-refine)
  b=$(best "$ewr" frc "models/$model.h5" "$@" --no-refine --stability)
  printf '%-52s %10.3f %10.3f %8.1f\n' "$label" "$a" "$b" "$(python3 -c "print($b / $a)")"
}
frc_case "blade-damper-blade-3d 1000..1500 step 5, all:7" blade-damper-blade-3d \
  --omega-start 1000 --omega-end 1500 --step 5 --harmonics all:7
frc_case "two-mass-damper 0.3..2.5 step 0.01, odd:15" two-mass-damper \
  --omega-start 0.3 --omega-end 2.5 --step 0.01 --harmonics odd:15
frc_case "single-contact-3d arclength 5.6..8, all:15" single-contact-3d \
  --omega-start 5.6 --omega-end 8 --step 0.05 --harmonics all:15 --continuation arclength
if [ "${LARGE:-0}" = 1 ]; then
  # A 4500-force pencil a point: the forces eliminated by harmonics, block Arnoldi
  # (docs/stability.md, section 2). One run each: a minute or more.
  tmp=$(mktemp -d)
  "$ewr" model example sector --refine 1 --contacts 100 --contact-3d -o "$tmp/sector100.h5" >/dev/null
  once() { local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null 2>&1 || true; t1=$(date +%s.%N); python3 -c "print($t1 - $t0)"; }
  args=(frc "$tmp/sector100.h5" --omega-start 3300 --omega-end 3500 --step 20 --harmonics all:7 --no-refine)
  a=$(once "$ewr" "${args[@]}")
  b=$(once "$ewr" "${args[@]}" --stability)
  printf '%-52s %10.3f %10.3f %8.1f\n' "3-D sector, 100 contacts, 3300..3500 step 20, all:7" "$a" "$b" \
    "$(python3 -c "print($b / $a)")"
  rm -rf "$tmp"
fi
echo
printf '%-52s %10s\n' "backbone, 100 amplitudes" "wall s"
printf '%-52s %10.3f\n' "two-mass-damper, mode 1, 0.1..1e4, odd:31" \
  "$(best "$ewr" modes models/two-mass-damper.h5 --from 0.1 --to 1e4 --points 100 --harmonics odd:31)"
printf '%-52s %10.3f\n' "blade-damper-blade-3d, mode 1, 1e-7..1e-2, all:7" \
  "$(best "$ewr" modes models/blade-damper-blade-3d.h5 --from 1e-7 --to 1e-2 --points 100 --harmonics all:7)"
