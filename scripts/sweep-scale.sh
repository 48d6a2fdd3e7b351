#!/usr/bin/env bash
# How a sweep of millions of specs behaves, on the CPU backend (no GPU):
#   1. --dry-run on a 5-line file of 6.48 M specs (2 dtypes × 6 WG × 600
#      rows × 900 cols of softmax_bwd) and one of 405 600: wall time and
#      peak RSS of counting and estimating (target: under 2 s, RSS that does
#      not grow with the sweep);
#   2. the 6.48 M sweep started for real (--yes), interrupted with SIGINT
#      after 10 s: peak RSS while running and how long the exit takes
#      after the signal (target: under 1 s).
#
# Usage: scripts/sweep-scale.sh [BINARY]   (default: go build into $DIR)
# Files under $DIR (default /tmp/mltop-sweep-scale). About 20 seconds.
set -euo pipefail
DIR=${DIR:-/tmp/mltop-sweep-scale}
mkdir -p "$DIR"
M=${1:-}
if [ -z "$M" ]; then
	M=$DIR/mltop
	go build -o "$M" .
fi
list() { # list N STEP: STEP, 2·STEP, …, N·STEP
	seq -s, "$2" "$2" $(($1 * $2))
}
write() { # write FILE ROWS COLS
	cat >"$1" <<YAML
sweeps:
  - kernel: softmax_bwd
    dtypes: [f32, bf16]
    knobs: {WG: [32, 64, 128, 256, 512, 1024]}
    dims: {rows: [$(list "$2" 64)], cols: [$(list "$3" 8)]}
YAML
}
write "$DIR/big.yaml" 600 900 # 6 480 000 specs
write "$DIR/mid.yaml" 100 338 # 405 600 specs
for f in big mid; do
	echo "== --dry-run $f.yaml"
	/usr/bin/time -f "%e s wall, %M KiB peak RSS" "$M" --config "$DIR/$f.yaml" --backend cpu --dry-run
done
echo "== big.yaml run, SIGINT after 10 s"
rm -f "$DIR/out.csv"
"$M" --config "$DIR/big.yaml" --backend cpu --yes --quiet --time-limit 0.01 --min-time 0.001 --warmup 0.001 \
	--csv "$DIR/out.csv" >/dev/null 2>"$DIR/run.log" &
pid=$!
sleep 10
grep VmHWM /proc/$pid/status
t0=$(date +%s.%N)
kill -INT $pid
wait $pid || true
t1=$(date +%s.%N)
echo "exit $(echo "$t1 - $t0" | bc) s after SIGINT"
cat "$DIR/run.log"
