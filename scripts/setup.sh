#!/usr/bin/env bash
# Installs what building ewr needs on a fresh Debian 12 machine: the HDF5 C library and
# pkg-config (the hdf5 crate links Debian's libhdf5 found through pkg-config). Idempotent:
# does nothing when they are already there.
set -euo pipefail
if pkg-config --exists hdf5 2>/dev/null; then
  exit 0
fi
echo "setup: installing libhdf5-dev and pkg-config" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq libhdf5-dev pkg-config >/dev/null
pkg-config --exists hdf5 || { echo "setup: libhdf5-dev installed but pkg-config cannot find hdf5" >&2; exit 1; }
