#!/usr/bin/env bash
# Records exhaustive landscapes on the GPU: every config of each sweep file
# given (default: configs/landscapes/*.yaml), as CSV (the replay fixtures of
# profiler/tune/testdata/landscapes) and JSON lines (wall time per spec),
# both gzipped into $OUT (default /tmp/mltop-landscapes).
#   scripts/tune-landscapes-gpu.sh BINARY [SWEEP.yaml ...]
set -uo pipefail
B=$(realpath "${1:?usage: scripts/tune-landscapes-gpu.sh BINARY [SWEEP.yaml ...]}")
shift
O=${OUT:-/tmp/mltop-landscapes}
mkdir -p "$O"
[ $# -gt 0 ] || set -- "$(dirname "$0")"/../configs/landscapes/*.yaml
nvidia-smi -L
for f in "$@"; do
	name=$(basename "$f" .yaml)
	t0=$(date +%s.%N)
	"$B" --config "$f" --csv "$O/$name.csv" --json --quiet --yes >"$O/$name.jsonl" 2>"$O/$name.err"
	rc=$?
	t1=$(date +%s.%N)
	echo "$name: exit $rc in $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s: $(grep -c ',ok,' "$O/$name.csv") ok rows of $(($(wc -l <"$O/$name.csv") - 1))"
	tail -2 "$O/$name.err"
	gzip -9f "$O/$name.csv" "$O/$name.jsonl"
done
