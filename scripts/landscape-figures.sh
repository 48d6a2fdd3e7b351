#!/usr/bin/env bash
# Adds recorded landscapes (scripts/tune-landscapes-gpu.sh's NAME.csv.gz,
# with NAME.jsonl.gz beside it for wall times when the CSV lacks wall_s)
# to profiler/tune/testdata/landscapes as one CSV each, wall_s folded in,
# and prints the strategies' figures on them (TestLandscapeFigures).
#   scripts/landscape-figures.sh [DIR] [-kernel USER_KERNEL_DIR]
#   (DIR default /tmp/mltop-landscapes)
set -euo pipefail
src=${1:-/tmp/mltop-landscapes}
shift || true
root=$(cd "$(dirname "$0")/.." && pwd)
dst=$root/profiler/tune/testdata/landscapes
[ -d "$src" ] || { echo "landscape-figures: no folder $src: give the folder scripts/tune-landscapes-gpu.sh wrote" >&2; exit 2; }
shopt -s nullglob
csvs=("$src"/*.csv.gz)
[ ${#csvs[@]} -gt 0 ] || { echo "landscape-figures: $src holds no NAME.csv.gz" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "${csvs[@]}" "$tmp"/
for f in "$src"/*.jsonl.gz; do cp "$f" "$tmp"/; done
cd "$root"
go run ./scripts/landscape-fold "$@" "$tmp"/*.csv.gz
mkdir -p "$dst"
cp -v "$tmp"/*.csv.gz "$dst"/
go test ./profiler/tune -run 'TestLandscapeFigures$' -count=1 -v | grep -v '^=== '
