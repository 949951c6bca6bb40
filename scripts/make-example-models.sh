#!/usr/bin/env bash
# Regenerates the shipped example models in models/ from the built-in examples.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -p ewr-cli
for name in oscillator-2d two-mass-damper two-dof-1d chain blade-damper-blade blade-damper-blade-3d single-contact-3d wedge-damper-3d bladed-disk; do
  target/release/ewr model example "$name" -o "models/$name.h5"
done
