#!/usr/bin/env bash
# Regenerates everything made with CalculiX (needs `ccx`: apt-get install calculix-ccx, and
# python3 for the mesh generator):
#   tests/ccx/          the plate fixture: inputs, and the committed outputs plate.sti,
#                       plate.mas, plate.dof (matrix export) and plate-freq.dat (ccx's modes);
#   models/blade-ccx/   the blade's inputs and blade-freq.dat (ccx's modes);
#   models/blade-ccx.h5 the blade imported by `ewr import calculix`.
# The blade's .sti/.mas/.dof are deleted afterwards: models/blade-ccx.h5 holds the matrices.
# EWR=path/to/ewr uses that binary instead of building the release one.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v ccx >/dev/null || { echo "ccx not found: apt-get install calculix-ccx" >&2; exit 1; }
python3 scripts/make_ccx_inputs.py
if [ -z "${EWR:-}" ]; then
  cargo build --release -p ewr-cli
  EWR=target/release/ewr
fi

# Runs the matrix export and the eigenvalue job of NAME in DIR, keeping only what we use.
run_ccx() {
  local dir=$1 name=$2
  (
    cd "$dir"
    ccx -i "$name" >/dev/null
    ccx -i "$name-freq" >/dev/null
    rm -f ./*.12d ./*.cvg ./*.frd ./*.sta spooles.out "$name.dat"
  )
}
run_ccx tests/ccx plate
run_ccx models/blade-ccx blade

"$EWR" import calculix models/blade-ccx/blade -o models/blade-ccx.h5 \
  --contacts models/blade-ccx/contacts.csv --forcing models/blade-ccx/forcing.csv \
  --rayleigh 0,1e-6 --units "SI (m, kg, s, N)" \
  --title "Pretwisted cantilever blade (CalculiX, 10 x 2 x 1 C3D20) with two tip-shroud friction contacts"
rm -f models/blade-ccx/blade.sti models/blade-ccx/blade.mas models/blade-ccx/blade.dof
"$EWR" model info models/blade-ccx.h5
