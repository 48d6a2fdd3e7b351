#!/usr/bin/env bash
# Copies recorded landscapes (scripts/tune-landscapes-gpu.sh's NAME.csv.gz
# and NAME.jsonl.gz) into profiler/tune/testdata/landscapes and prints the
# strategies' figures on them (TestLandscapeFigures).
#   scripts/landscape-figures.sh [DIR]   (default /tmp/mltop-landscapes)
set -euo pipefail
src=${1:-/tmp/mltop-landscapes}
root=$(cd "$(dirname "$0")/.." && pwd)
dst=$root/profiler/tune/testdata/landscapes
[ -d "$src" ] || { echo "landscape-figures: no folder $src: give the folder scripts/tune-landscapes-gpu.sh wrote" >&2; exit 2; }
mkdir -p "$dst"
shopt -s nullglob
files=("$src"/*.csv.gz "$src"/*.jsonl.gz)
[ ${#files[@]} -gt 0 ] || { echo "landscape-figures: $src holds no .csv.gz or .jsonl.gz" >&2; exit 2; }
cp -v "${files[@]}" "$dst"/
cd "$root"
go test ./profiler/tune -run 'TestLandscapeFigures$' -count=1 -v | grep -v '^=== '
