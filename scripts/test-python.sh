#!/usr/bin/env bash
# Builds the `ewr` Python package (crates/py, PyO3 + maturin) into a virtual environment
# inside the build area (target/pyenv) and runs its tests with pytest.
#
# The package is installed exactly as a user installs it, `pip install ./crates/py`, except
# that maturin comes from the venv (no build isolation) so that reruns do not download it.
# The Fig. 5 test compares with the `ewr` binary's CSV: it uses $EWR_BIN, else
# target/release/ewr; with EWR_REQUIRE_CLI=1 (CI) a missing binary is a failure.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=target/pyenv
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
export PATH="$PWD/$VENV/bin:$PATH"
"$VENV/bin/pip" install -q "maturin>=1.7,<2" "numpy>=1.21" "scipy>=1.8" "pytest>=7"
"$VENV/bin/pip" install -q --no-build-isolation --force-reinstall --no-deps ./crates/py
"$VENV/bin/python" -m pytest -q crates/py/tests "$@"
