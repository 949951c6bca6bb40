#!/usr/bin/env bash
# Issue 29's CalculiX blade with 3-D tip-shroud contacts: the shipped blade (models/blade-ccx,
# 570 DOFs) re-imported with its two shroud faces as 3-D contacts (interference preload,
# normal and tangential contact stiffness K, friction coefficient 0.3), swept through its two
# shroud-coupled resonances at several harmonic sets and with `auto`. Prints each set's two
# highest peaks, which one is higher, the time and the failed points: a coarse set can rank
# the peaks the other way round from a converged one, and `auto` should rank them as the
# richest set does.
#
#     bash scripts/bench-blade-shrouds.sh [EWR]    # EWR defaults to target/release/ewr
#     K=1e7 PRELOAD=67 SETS="all:5 all:15 all:31 auto" bash scripts/bench-blade-shrouds.sh
#
# With STEPS (e.g. K=1e7 PRELOAD=67 BAND="6000 10000" STEPS="20 40"), each set is swept with
# each step instead, and the amplitudes compared at the frequencies the sweeps share, beyond
# the resonance where the shroud contacts have stuck again (from OMEGA_STUCK, default 9000):
# the held mean forces of contacts stuck all period should not depend on the step
# (docs/stuck-contacts.md).
#
# Needs ccx (apt-get install calculix-ccx) to export the matrices again.
set -euo pipefail
cd "$(dirname "$0")/.."
ewr=$(readlink -f "${1:-target/release/ewr}")
command -v ccx >/dev/null || { echo "ccx not found: apt-get install calculix-ccx" >&2; exit 1; }
K=${K:-1e6}
PRELOAD=${PRELOAD:-66.7}
SETS=${SETS:-all:5 all:15 all:31 auto}
BAND=${BAND:-5000 6000 10}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp models/blade-ccx/*.inp models/blade-ccx/forcing.csv "$tmp/"
(cd "$tmp" && ccx -i blade >/dev/null)
g0=$(python3 -c "print(-$PRELOAD / $K)")
# The faces and normals of models/blade-ccx/contacts.csv, as 3-D contacts.
cat >"$tmp/contacts.csv" <<EOF
node,other,mu,g0,k_n,k_t,nx,ny,nz
192,ground,0.3,$g0,$K,$K,0.000000,-0.866025,0.500000
202,ground,0.3,$g0,$K,$K,0.000000,0.866025,-0.500000
EOF
"$ewr" import calculix "$tmp/blade" -o "$tmp/shroud.h5" --contacts "$tmp/contacts.csv" \
  --forcing "$tmp/forcing.csv" --rayleigh 0,1e-6 --units "SI (m, kg, s, N)" \
  --title "blade-ccx with two 3-D tip-shroud contacts (K = $K, preload $PRELOAD N)" >/dev/null
read -r w0 w1 dw <<<"$BAND"
if [ -n "${STEPS:-}" ]; then
  echo "blade-ccx, 3-D shrouds: K = $K N/m, preload $PRELOAD N, w $w0..$w1, steps $STEPS"
  printf '%-8s %6s %9s %7s %12s %12s\n' set step "wall s" failed "amp at end" "max diff %"
  for set in $SETS; do
    first=""
    for st in $STEPS; do
      t0=$(date +%s.%N)
      "$ewr" frc "$tmp/shroud.h5" --omega-start "$w0" --omega-end "$w1" --step "$st" \
        --harmonics "$set" --no-refine --csv "$tmp/$set-$st.csv" --json >"$tmp/$set-$st.json" \
        2>"$tmp/$set-$st.err" || true
      t1=$(date +%s.%N)
      python3 - "$tmp/$set-$st.csv" "${first:-$tmp/$set-$st.csv}" "$set" "$st" "$t0" "$t1" \
        "${OMEGA_STUCK:-9000}" "$tmp/$set-$st.json" <<'PY'
import csv, json, sys
path, ref, name, st, t0, t1, w_stuck, js = sys.argv[1:9]
def amps(p):
    out = {}
    for row in csv.DictReader(open(p)):
        if row["converged"] == "1":
            out[round(float(row["omega"]), 6)] = float(row["amp_norm"])
    return out
a, b = amps(path), amps(ref)
common = [w for w in a if w in b and w >= float(w_stuck)]
diff = max((abs(a[w] - b[w]) / b[w] for w in common), default=float("nan"))
end = a[max(a)] if a else float("nan")
try:
    failed = json.load(open(js))["failed_points"]
except (OSError, ValueError, KeyError):
    failed = "?"
print(f"{name:8} {st:>6} {float(t1) - float(t0):9.2f} {failed:>7} {end:12.4e} {100 * diff:12.2f}")
PY
      first=${first:-$tmp/$set-$st.csv}
    done
  done
  exit 0
fi
echo "blade-ccx, 3-D shrouds: K = $K N/m, preload $PRELOAD N, w $w0..$w1 step $dw"
printf '%-8s %9s %22s %22s %8s %7s\n' set "wall s" "peak 1 (w: amp)" "peak 2 (w: amp)" higher failed
for set in $SETS; do
  t0=$(date +%s.%N)
  "$ewr" frc "$tmp/shroud.h5" --omega-start "$w0" --omega-end "$w1" --step "$dw" \
    --harmonics "$set" --json >"$tmp/$set.json" 2>"$tmp/$set.err" || true
  t1=$(date +%s.%N)
  python3 - "$tmp/$set.json" "$set" "$t0" "$t1" <<'PY'
import json, sys
path, name, t0, t1 = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
try:
    d = json.load(open(path))
except (OSError, ValueError):
    print(f"{name:8} {t1 - t0:9.2f} (no result)")
    sys.exit()
peaks = sorted((p for c in d["peaks"] for p in c), key=lambda p: -p["amplitude"])[:2]
peaks.sort(key=lambda p: p["omega"])
cells = [f'{p["omega"]:8.1f}: {p["amplitude"]:.4e}' for p in peaks] + ["-"] * (2 - len(peaks))
higher = "-"
if len(peaks) == 2:
    higher = "first" if peaks[0]["amplitude"] > peaks[1]["amplitude"] else "second"
print(f"{name:8} {t1 - t0:9.2f} {cells[0]:>22} {cells[1]:>22} {higher:>8} {d['failed_points']:7}")
PY
done
