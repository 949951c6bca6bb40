#!/usr/bin/env bash
# Builds the `ewr` Python package (crates/py, PyO3 + maturin) as the self-contained wheel
# (scripts/build-wheel.sh), installs it into a virtual environment inside the build area
# (target/pyenv) and runs its tests with pytest; then installs the same wheel into a fresh
# venv with neither Rust nor the build's PATH and runs `import ewr` and the `ewr` command
# from it, checking that HDF5 is the wheel's own copy.
#
# The Fig. 5 test compares with the `ewr` binary's CSV: it uses $EWR_BIN, else
# target/release/ewr; with EWR_REQUIRE_CLI=1 (CI) a missing binary is a failure.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build-wheel.sh
wheel=$(ls target/wheelhouse/ewr-*.whl)
VENV=target/pyenv
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
export PATH="$PWD/$VENV/bin:$PATH"
"$VENV/bin/pip" install -q "numpy>=1.21" "scipy>=1.8" "pytest>=7"
"$VENV/bin/pip" install -q --force-reinstall --no-deps "$wheel"
"$VENV/bin/python" -m pytest -q crates/py/tests "$@"

echo "== the wheel in a fresh venv, without Rust on PATH"
FRESH=target/wheeltest
rm -rf "$FRESH"
python3 -m venv "$FRESH"
bare() { env -i HOME="$HOME" PATH="$PWD/$FRESH/bin:/usr/bin:/bin" "$@"; }
bare pip install -q "$wheel"
if bare sh -c 'command -v cargo || command -v rustc'; then
  echo "test-python: Rust is on the bare PATH" >&2
  exit 1
fi
bare python -c "import ewr; s = ewr.Model.example('two-mass-damper').solve(0.9, harmonics='odd:7'); assert s.converged, s"
bare ewr frc models/two-mass-damper.h5 --omega-start 0.5 --omega-end 1.0 --step 0.05 \
  --harmonics odd:7 --csv "$FRESH/frc.csv" >/dev/null
test -s "$FRESH/frc.csv"
ext=$(find "$FRESH" -name '_ewr*.so' | head -1)
hdf5=$(ldd "$ext" | grep -i hdf5 | head -1)
case "$hdf5" in
  *ewr.libs*) echo "HDF5 from the wheel: $hdf5" ;;
  *) echo "test-python: the wheel's module loads HDF5 from outside the wheel: $hdf5" >&2; exit 1 ;;
esac
