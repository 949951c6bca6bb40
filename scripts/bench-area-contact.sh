#!/usr/bin/env bash
# Issue 32's CalculiX area-contact benchmark: a C3D8 cantilever (7488 DOFs) pressed on a rigid
# wall over 26 nodes with 3-D contacts (friction, normal stiffness, preload, lift-off), built
# by scripts/make_ccx_wall.py, exported by CalculiX and imported by `ewr import calculix`;
# then a 45-step all:7 FRC through the first resonance with each receptance backend in RECEPTANCE
# (default "auto sparse"), one process each. Prints a Markdown table: wall time, Newton
# iterations, points, failed points and peak memory; each run's --profile report is kept in
# OUT/profile-<backend>.txt.
#
#     bash scripts/bench-area-contact.sh                    # needs ccx (apt-get install calculix-ccx)
#     RECEPTANCE="auto" HARMONICS=all:15 bash scripts/bench-area-contact.sh
#     MODES="all:7 all:15" bash scripts/bench-area-contact.sh   # also `ewr modes` (mode 1, 9
#                  # amplitudes 1e-7..1e-3) with each linear solver in LINEAR (default "dense auto")
#
# Timings are wall-clock: compare the rows of one run, on one machine, not runs.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
backends=${RECEPTANCE:-"auto sparse"}
harmonics=${HARMONICS:-all:7}
out=${BENCH_OUT:-$PWD/bench-area-contact-out}
mkdir -p "$out"
command -v ccx >/dev/null || { echo "ccx not found: apt-get install calculix-ccx" >&2; exit 2; }
if [[ -n "${EWR:-}" ]]; then
    ewr=("$EWR")
else
    (cd "$here/.." && bash scripts/setup.sh && cargo build --release -q -p ewr-cli)
    ewr=("$here/../target/release/ewr")
fi

model="$out/wall.h5"
if [[ ! -s "$model" ]]; then
    echo "bench-area-contact: CalculiX model and import" >&2
    python3 "$here/make_ccx_wall.py" "$out"
    (cd "$out" && ccx -i wall >/dev/null && rm -f wall.12d wall.cvg wall.frd wall.sta wall.dat spooles.out)
    "${ewr[@]}" import calculix "$out/wall" -o "$model" --contacts "$out/contacts.csv" \
        --forcing "$out/forcing.csv" --rayleigh 0,7e-6 --units "SI (m, kg, s, N)" \
        --title "Cantilever 240 x 15 x 60 mm (48 x 3 x 12 C3D8) on a rigid wall over 26 nodes" >/dev/null
fi
sweep=(frc "$model" --harmonics "$harmonics" --omega-start 4400 --omega-end 6160 --step 40
       --amplitude dynamic --profile --json)

echo "cantilever on a wall, 7488 DOFs, 26 3-D contacts, $harmonics, 4400..6160 step 40 ($(nproc) cores here)"
echo
echo "| receptance | wall s | Newton iterations | points | failed | peak MB |"
echo "|---|---:|---:|---:|---:|---:|"
for b in $backends; do
    status=0
    TIMEFORMAT="%R"
    { time "${ewr[@]}" "${sweep[@]}" --receptance "$b" >"$out/frc-$b.json" \
        2>"$out/profile-$b.txt" || status=$?; } 2>"$out/time-$b"
    wall=$(cat "$out/time-$b")
    if [[ $status -ge 2 ]]; then
        echo "| $b | failed (exit $status): see $out/profile-$b.txt | | | | |"
        continue
    fi
    field() { grep -E "^  \"$1\": " "$out/frc-$b.json" | sed -E 's/.*: ([0-9.]+).*/\1/' || echo "?"; }
    mem=$(awk -v m="$(field peak_memory_mb)" 'BEGIN { printf "%.0f", m }')
    echo "| $b | $wall | $(field iterations) | $(field points) | $(field failed_points) | $mem |"
done
echo
echo "Per-phase wall and CPU time of each run: $out/profile-<backend>.txt"

if [[ -n "${MODES:-}" ]]; then
    echo
    echo "ewr modes, mode 1, 9 amplitudes 1e-7..1e-3 (docs/nonlinear-modes.md, section 6)"
    echo
    echo "| harmonics | --linear | wall s | converged | GMRES products | peak MB |"
    echo "|---|---|---:|---:|---:|---:|"
    for h in $MODES; do
        for l in ${LINEAR:-dense auto}; do
            tag="modes-${h/:/}-$l"
            status=0
            TIMEFORMAT="%R"
            { time "${ewr[@]}" modes "$model" --mode 1 --from 1e-7 --to 1e-3 --points 9 \
                --harmonics "$h" --linear "$l" --json -o "$out/$tag.h5" >"$out/$tag.json" \
                2>"$out/$tag.txt" || status=$?; } 2>"$out/time-$tag"
            if [[ $status -ge 2 ]]; then
                echo "| $h | $l | failed (exit $status): see $out/$tag.txt | | | |"
                continue
            fi
            read -r conv gmres peak < <(python3 - "$out/$tag.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
b = d["backbone"]
print(sum(p["converged"] for p in b), sum(p.get("gmres_iterations", 0) for p in b),
      round(d.get("peak_memory_mb", float("nan"))))
PY
            )
            echo "| $h | $l | $(cat "$out/time-$tag") | $conv / 9 | $gmres | $peak |"
        done
    done
fi
