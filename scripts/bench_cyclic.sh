#!/usr/bin/env bash
# One sector against the full annulus on the same tuned disk (issue 16): the lumped
# bladed-disk example with N = 12 and 24 sectors, EO 3, one FRC (odd:7, w = 0.5 .. 2,
# step 0.01) per computation, in one run of this script. Prints wall time, peak memory
# and the largest difference of the sector-0 peak amplitudes between the two.
#
#   bash scripts/bench_cyclic.sh            (EWR_BIN=path/to/ewr to skip the release build)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${EWR_BIN:-}" ]; then
  cargo build --release -q -p ewr-cli
  EWR_BIN=target/release/ewr
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sweep=(--omega-start 0.5 --omega-end 2 --step 0.01 --harmonics odd:7)
# "... N Newton iterations, T s, peak memory M MB" -> "T M"
stats() { sed -n 's/.* \([0-9.]*\) s, peak memory \([0-9.]*\) MB.*/\1 \2/p' "$1" | head -1; }
printf '%-4s %-8s %6s %9s %11s %11s %12s\n' N model DOFs contacts "time [s]" "memory [MB]" "max |diff|"
for n in 12 24; do
  "$EWR_BIN" model example bladed-disk --sectors "$n" -o "$tmp/s$n.h5" > /dev/null
  "$EWR_BIN" model annulus "$tmp/s$n.h5" -o "$tmp/a$n.h5" > /dev/null
  "$EWR_BIN" frc "$tmp/s$n.h5" "${sweep[@]}" --csv "$tmp/s$n.csv" > "$tmp/s$n.log" 2>&1
  "$EWR_BIN" frc "$tmp/a$n.h5" "${sweep[@]}" --csv "$tmp/a$n.csv" > "$tmp/a$n.log" 2>&1
  # Sector 0's blade (DOF 2) in both files (the annulus has more columns before it).
  diff=$(paste -d, "$tmp/s$n.csv" "$tmp/a$n.csv" | awk -F, '
    NR == 1 { for (i = 1; i <= NF; i++) if ($i == "peak_u2") c[++k] = i; next }
    { d = $c[1] - $c[2]; if (d < 0) d = -d; if (d > m) m = d }
    END { printf "%.2e", m }')
  read -r ts ms < <(stats "$tmp/s$n.log")
  read -r ta ma < <(stats "$tmp/a$n.log")
  printf '%-4s %-8s %6s %9s %11s %11s %12s\n' "$n" sector 8 2 "$ts" "$ms" ""
  printf '%-4s %-8s %6s %9s %11s %11s %12s\n' "$n" annulus $((4 * n)) $((2 * n)) "$ta" "$ma" "$diff"
  awk -v a="$ta" -v s="$ts" -v n="$n" 'BEGIN { if (s > 0) printf "     annulus / sector time: %.0fx (N = %d)\n", a / s, n }'
done
