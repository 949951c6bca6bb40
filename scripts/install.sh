#!/usr/bin/env bash
# One build, both front ends: builds the self-contained wheel (scripts/build-wheel.sh) and
# installs it into a virtual environment, `.venv` here (or $EWR_VENV). Then
#
#     source .venv/bin/activate      # `ewr ...` on PATH and `import ewr` in Python
#
# or call .venv/bin/ewr directly. The wheel itself (target/wheelhouse/ewr-*.whl) installs
# with pip on another x86-64 Linux machine without Rust or libhdf5.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build-wheel.sh >/dev/null
wheel=$(ls target/wheelhouse/ewr-*.whl)
VENV=${EWR_VENV:-.venv}
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
"$VENV/bin/pip" install -q --disable-pip-version-check --force-reinstall "$wheel"
echo "installed $(basename "$wheel") into $VENV: 'source $VENV/bin/activate' puts ewr on PATH" >&2
