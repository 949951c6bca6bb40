#!/usr/bin/env bash
# Automatic harmonics (issue 29) against fixed sets: wall time per curve (best of 3; the
# reference once) and the largest and mean relative error of the amplitude against a rich
# reference set, for seed 000's Fig. 5 curve (mu N = 8), single-contact-3d and
# blade-damper-blade-3d.
#
#     bash scripts/bench-auto.sh [EWR]        # EWR defaults to target/release/ewr
#     LARGE=1 bash scripts/bench-auto.sh      # also the 100-contact 3-D sector through its
#                                             # resonance (all:15 as the reference; 4 minutes)
set -euo pipefail
cd "$(dirname "$0")/.."
ewr=$(readlink -f "${1:-target/release/ewr}")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run() { # name model sweep-args... -- sets...  (model: a shipped model's name, or a path)
  local name=$1 model=$2; shift 2
  case $model in */*) ;; *) model="models/$model.h5" ;; esac
  local args=()
  while [ "$1" != "--" ]; do args+=("$1"); shift; done
  shift
  local runs=1 # the reference (the first set) once, the others best of 3
  for set in "$@"; do
    local best=""
    for _ in $(seq $runs); do
      local t0 t1
      t0=$(date +%s.%N)
      "$ewr" frc "$model" "${args[@]}" --harmonics "$set" --no-refine \
        --csv "$tmp/$name-$set.csv" >/dev/null 2>&1 || true
      t1=$(date +%s.%N)
      best=$(python3 -c "print(min(float('${best:-1e9}'), $t1 - $t0))")
    done
    echo "$name $set $best"
    runs=3
  done
}
{
  run fig5 oscillator-2d --omega-start 0.05 --omega-end 1.5 --step 0.005 --mu-n 8 -- \
    odd:255 auto odd:15 odd:31 odd:59
  run sc3d single-contact-3d --omega-start 1 --omega-end 10 --step 0.05 -- \
    all:127 auto all:15 all:31 all:63
  run bdb3d blade-damper-blade-3d --omega-start 1000 --omega-end 1500 --step 5 -- \
    all:63 auto all:3 all:7 all:15 all:31
  if [ "${LARGE:-0}" = 1 ]; then
    # 100 3-D contacts (4500 force unknowns at all:7), through the first bending resonance.
    "$ewr" model example sector --refine 1 --contacts 100 --contact-3d -o "$tmp/sector100.h5" >/dev/null
    run sec100 "$tmp/sector100.h5" --receptance modal:100 --omega-start 3900 --omega-end 4200 \
      --step 7.5 -- all:15 auto all:1 all:3 all:7
  fi
} >"$tmp/times"
python3 - "$tmp" <<'PY'
import csv, sys, collections
tmp = sys.argv[1]
rows = [l.split() for l in open(f"{tmp}/times")]
ref = {}
print(f"{'curve':6} {'set':8} {'wall s':>8} {'max err':>9} {'mean err':>9}  sets used")
for name, s, t in rows:
    try:
        r = list(csv.DictReader(open(f"{tmp}/{name}-{s}.csv")))
    except FileNotFoundError:
        r = None
    first = name not in ref
    if r is None:
        # A failed reference leaves its curve without errors (not the next set as reference).
        ref.setdefault(name, None)
        print(f"{name:6} {s:8} {float(t):8.3f} (failed{', reference' if first else ''})")
        continue
    d = {round(float(x["omega"]), 9): float(x["amp_norm"]) for x in r}
    if first:
        ref[name] = d
        print(f"{name:6} {s:8} {float(t):8.3f} {'(reference)':>9}")
        continue
    e = [abs(d[w] - ref[name][w]) / ref[name][w]
         for w in d if ref[name] and w in ref[name] and ref[name][w] > 0]
    if not e:
        print(f"{name:6} {s:8} {float(t):8.3f} (no reference points)")
        continue
    used = collections.Counter(x.get("h_max") for x in r if x.get("h_max"))
    print(f"{name:6} {s:8} {float(t):8.3f} {max(e):9.2e} {sum(e)/len(e):9.2e}  "
          + (" ".join(f"H={h}:{n}" for h, n in sorted(used.items(), key=lambda kv: int(kv[0]))) or "-"))
PY
