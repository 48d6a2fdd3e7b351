#!/usr/bin/env bash
# The tolerance of user reductions on a GPU: examples/row_sum (a block
# reduce in float of rows read as f32, f16 or bf16, `terms: cols`) over
# rows of 2^10 … 2^17 terms, inputs N(0,1) and U(0,1) (all positive);
# and three broken twins made here: the last column dropped, the last
# block's stride off by one, and the result scaled by 1+2^-10. Prints one
# line per (twin, init, dtype, cols): status and worst |Δ|/bound.
#   scripts/tolerance-user-gpu.sh BINARY   (logs under $OUT, default /tmp/tolerance-user)
set -uo pipefail
bin=$(realpath "${1:?usage: scripts/tolerance-user-gpu.sh BINARY}")
out=${OUT:-/tmp/tolerance-user}
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
twin() { # twin NAME SED: a copy of row_sum with one edit to its source
	cp -r examples/row_sum "$work/$1"
	sed -i "s/^name: row_sum/name: row_sum_$1/" "$work/$1/kernel.yaml"
	sed -i "$2" "$work/$1/row_sum.cu"
	cmp -s examples/row_sum/row_sum.cu "$work/$1/row_sum.cu" && { echo "twin $1: the edit changed nothing"; exit 1; }
}
cp -r examples/row_sum "$work/good"
twin dropped 's/c < cols; c += WG/c < cols - 1; c += WG/'
twin offbyone 's/c < cols; c += WG/c < cols + (r + 1 < rows); c += WG/'
twin scaled 's/Y\[r\] = partial\[0\];/Y[r] = partial[0] * (1.0f + 1.0f \/ 1024.0f);/'
for init in "normal(0, 1)" "uniform(0, 1)"; do
	for k in good dropped offbyone scaled; do
		sed -i "s/^  - {name: X, dtype: T, shape: \[rows, cols\].*/  - {name: X, dtype: T, shape: [rows, cols], init: \"$init\"}/" "$work/$k/kernel.yaml"
	done
	name=$(echo "$init" | cut -d'(' -f1)
	cat >"$work/sweep.yaml" <<YAML
backend: cuda
defaults: {time_limit: 0.2, min_time: 0.01, warmup: 0.01}
sweeps:
  - kernel: $work/good/kernel.yaml
    dtypes: [f32, f16, bf16]
    dims: {rows: 1024, cols: [1024, 4096, 16384, 65536, 131072]}
  - kernel: $work/dropped/kernel.yaml
    dtypes: [f32, f16, bf16]
    dims: {rows: 1024, cols: [1024, 4096, 16384, 65536, 131072]}
  - kernel: $work/offbyone/kernel.yaml
    dtypes: [f32, f16, bf16]
    dims: {rows: 1024, cols: [1024, 4096, 16384, 65536, 131072]}
  - kernel: $work/scaled/kernel.yaml
    dtypes: [f32, f16, bf16]
    dims: {rows: 1024, cols: [1024, 4096, 16384, 65536, 131072]}
YAML
	"$bin" --config "$work/sweep.yaml" --csv "$out/$name.csv" --quiet --yes >"$out/$name.txt" 2>"$out/$name.err"
	python3 - "$out/$name.csv" "$name" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print("init=%s" % sys.argv[2])
print("%-22s %-5s %7s %-9s %s" % ("kernel", "dtype", "cols", "status", "worst|d|/bound"))
for r in rows:
    print("%-22s %-5s %7s %-9s %s" % (r["kernel"], r["dtype"], r["cols"], r["status"], r.get("worst_over_bound", "")))
PY
done | tee "$out/summary.txt"
