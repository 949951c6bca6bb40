#!/usr/bin/env bash
# Nonlinear modes side by side with a peer (issue 30): NLvib's EPMC (Krack; Octave, its own
# harmonic balance with AFT) and `ewr modes` (Python, exact E-WR law) on the same two-DOF
# chain with a Jenkins element (NLvib's example 05 with its regularised friction replaced by
# an elastic dry friction element: masses 0.02 and 1, springs 0 / 40 / 600, k_t = KT and
# mu N = MUN on DOF 1, no dampers). Prints each tool's time and points, and the two backbones
# (frequency, modal damping ratio) at NLvib's amplitudes. One run; compare times of one run.
#
#     NLVIB=/path/to/NLvib bash scripts/bench-nlvib-epmc.sh     # needs octave-cli and ewr's
#     H=41 NTD=4096 NLVIB=... bash scripts/bench-nlvib-epmc.sh   # Python package (.venv)
#
# NLvib is GPL: it is not shipped here; clone github.com/maltekrack/NLvib.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
: "${NLVIB:?set NLVIB to an NLvib checkout (github.com/maltekrack/NLvib)}"
command -v octave-cli >/dev/null || { echo "octave-cli not found: apt-get install octave" >&2; exit 2; }
python=${PYTHON:-"$here/../.venv/bin/python"}
export KT=${KT:-100} MUN=${MUN:-5} H=${H:-21} NTD=${NTD:-1024} POINTS=${POINTS:-100}
export LOG10A_S=${LOG10A_S:--1.5} LOG10A_E=${LOG10A_E:-1} NLVIB
out=$(mktemp)
trap 'rm -f "$out"' EXIT
echo "NLvib EPMC, H = $H (all harmonics), $NTD samples (AFT), Octave $(octave-cli --version | head -1 | awk '{print $NF}'):"
(cd "$here/nlvib" && octave-cli --no-gui epmc_jenkins.m >"$out" 2>&1) || true
grep -E "^points" "$out" || { echo "NLvib failed:"; tail -20 "$out"; exit 1; }
echo
echo "ewr modes, odd:$(( H % 2 ? H : H - 1 )), $POINTS amplitudes:"
"$python" -W ignore "$here/nlvib/compare_epmc.py" "$out"
