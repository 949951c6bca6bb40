#!/usr/bin/env bash
# Packs the release `ewr`, the shared libraries it loads (HDF5 and what it links, as `ldd`
# lists them), glibc's loader and scripts/bench-threads.sh into one folder, so that the
# thread-scaling benchmark runs on a machine without Rust or HDF5 (issue 32):
#
#     bash scripts/pack-bench.sh DIR
#     THREADS="1 2 8 16" bash DIR/bench-threads.sh      # there; results in ./bench-threads-out
#
# With XZ=1 it also writes DIR.tar.xz (12 MB against 41 MB: a lent machine's upload, the
# working tree included, is limited to 64 MB); there `mkdir -p d && tar -C d -xJf DIR.tar.xz`.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:?usage: bash scripts/pack-bench.sh DIR}
bash scripts/setup.sh
cargo build --release -q -p ewr-cli
mkdir -p "$dir/lib"
cp target/release/ewr scripts/bench-threads.sh "$dir/"
# Without its line tables the binary is a fifth of the size (a device's upload is limited).
strip --strip-debug "$dir/ewr"
# Every library the binary loads, glibc's included (the other machine's may be older), and
# the loader that the copies are run through.
ldd target/release/ewr | awk '/=> \// { print $3 } /^\s*\/.*ld-linux/ { print $1 }' |
    while read -r lib; do cp -L "$lib" "$dir/lib/"; done
cp -L /lib64/ld-linux-x86-64.so.2 "$dir/lib/"
echo "packed $(du -sh "$dir" | cut -f1) into $dir: THREADS=\"1 2 8 16\" bash $dir/bench-threads.sh"
if [[ "${XZ:-}" == 1 ]]; then
    tar -C "$dir" -cJf "$dir.tar.xz" .
    echo "and $(du -sh "$dir.tar.xz" | cut -f1) compressed into $dir.tar.xz"
fi
