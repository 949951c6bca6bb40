#!/usr/bin/env bash
# Executes every example notebook (examples/*.ipynb) with nbconvert in the venv where
# scripts/test-python.sh installed the `ewr` wheel (target/pyenv; run that first), after
# installing what the notebooks need there (Jupyter's kernel and nbconvert, matplotlib, tqdm
# and ipywidgets, so that tqdm draws a widget instead of text lines). A notebook fails on any
# cell error, on a cell running longer than $EWR_NB_TIMEOUT seconds (default 300), and on any
# output written to stderr (warnings, tqdm's "IProgress not found", ...): the notebooks are
# meant to run clean. The executed copies are left in $EWR_NB_OUT (default a temporary
# folder), the notebooks in the repository stay without outputs.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=target/pyenv
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c "import ewr" 2>/dev/null; then
  echo "test-notebooks: no ewr package in $VENV: run bash scripts/test-python.sh first" >&2
  exit 1
fi
# The `ewr` command the notebooks call is the one the package installs into the venv.
export PATH="$PWD/$VENV/bin:$PATH"
export JUPYTER_PLATFORM_DIRS=1 PYDEVD_DISABLE_FILE_VALIDATION=1
"$VENV/bin/pip" install -q "nbconvert>=7" "nbclient>=0.7" "nbformat>=5.7" "ipykernel>=6" \
  "matplotlib>=3.5" "tqdm>=4.60" "ipywidgets>=8" "tomli; python_version < '3.11'"
# Matplotlib builds its font cache on first import and says so on stderr: do it here.
MPLBACKEND=Agg "$VENV/bin/python" -c "import matplotlib.pyplot"

OUT=${EWR_NB_OUT:-$(mktemp -d)}
mkdir -p "$OUT"
shopt -s nullglob
notebooks=(examples/*.ipynb)
if [ ${#notebooks[@]} -eq 0 ]; then
  echo "test-notebooks: no notebooks in examples/" >&2
  exit 1
fi
failed=0
for nb in "${notebooks[@]}"; do
  start=$SECONDS
  # (ipykernel 7 warns on every start that its local TCP sockets are not encrypted.)
  if "$VENV/bin/jupyter" nbconvert --to notebook --execute --output-dir "$OUT" \
    --ExecutePreprocessor.timeout="${EWR_NB_TIMEOUT:-300}" \
    --ExecutePreprocessor.kernel_name=python3 --log-level=WARN "$nb" \
    2> >(grep -v "Kernel is running over TCP without encryption" >&2); then
    echo "ok   $nb ($((SECONDS - start)) s)"
  else
    echo "FAIL $nb ($((SECONDS - start)) s)" >&2
    failed=1
  fi
done
[ "$failed" -eq 0 ] || exit 1

# Outputs on stderr, and notebooks committed with outputs.
"$VENV/bin/python" - "$OUT" "${notebooks[@]}" <<'EOF'
import sys
from pathlib import Path

import nbformat

out, sources = Path(sys.argv[1]), sys.argv[2:]
bad = []
for src in sources:
    nb = nbformat.read(src, as_version=4)
    if any(c.get("outputs") or c.get("execution_count") for c in nb.cells if c.cell_type == "code"):
        bad.append(f"{src}: committed with outputs (clear them, or rerun scripts/make_example_notebooks.py)")
    done = nbformat.read(out / Path(src).name, as_version=4)
    for i, cell in enumerate(done.cells):
        for o in cell.get("outputs", []):
            if o.get("output_type") == "stream" and o.get("name") == "stderr":
                bad.append(f"{src}, cell {i}: stderr output:\n{o.get('text', '').strip()}")
if bad:
    print("test-notebooks:", *bad, sep="\n", file=sys.stderr)
    sys.exit(1)
print(f"{len(sources)} notebooks executed cleanly; executed copies in {out}")
EOF
