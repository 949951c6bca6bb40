#!/usr/bin/env bash
# Runs every benchmark of the workspace in one go and prints their tables.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
for b in crates/*/benches/*.rs; do
  crate=$(basename "$(dirname "$(dirname "$b")")")
  name=$(basename "$b" .rs)
  echo "== ewr-$crate / $name"
  cargo bench -q -p "ewr-$crate" --bench "$name"
done
