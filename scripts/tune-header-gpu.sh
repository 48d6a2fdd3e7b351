#!/usr/bin/env bash
# A tuning table on an NVIDIA GPU, used from CUDA code: mltop tune searches
# examples/tune_matmul (six knobs, 2 078 configurations per shape) over
# twelve GEMM shapes with a small budget, writes the table and the C/CUDA
# and Metal headers, then nvcc compiles examples/tune_matmul/table_demo.cu
# against the header and runs it: per shape the selected configuration,
# its time and its error against a float64-summed reference GEMM.
#   scripts/tune-header-gpu.sh BINARY
# Run from anywhere; needs nvcc on the PATH (or $NVCC) and python3 with
# NumPy (mltop's check of each measured configuration). Output goes under
# $OUT (default /tmp/tune-header-gpu). About 3 minutes on an H100; set
# BUDGET (evaluations per shape, default 12) for a longer search.
set -euo pipefail
bin=$(realpath "${1:?usage: scripts/tune-header-gpu.sh BINARY}")
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-/tmp/tune-header-gpu}
nvcc=${NVCC:-nvcc}
budget=${BUDGET:-12}
mkdir -p "$out"
out=$(cd "$out" && pwd)

# The shapes of examples/tune_matmul/tune-table.yaml (a test keeps them equal):
# square, tall, wide, small K, large K.
SHAPES="M=512,N=512,K=512;M=1024,N=1024,K=1024;M=2048,N=2048,K=2048;M=4096,N=4096,K=4096"
SHAPES+=";M=8192,N=256,K=1024;M=16384,N=1024,K=1024;M=256,N=8192,K=1024;M=1024,N=16384,K=1024"
SHAPES+=";M=4096,N=4096,K=64;M=2048,N=2048,K=256;M=512,N=512,K=16384;M=1024,N=1024,K=8192"

command -v "$nvcc" >/dev/null || { echo "nvcc not found: put the CUDA toolkit's bin on the PATH or set NVCC" >&2; exit 2; }

echo "== mltop tune: 12 shapes, $budget evaluations each" >&2
start=$(date +%s)
"$bin" tune "$root/examples/tune_matmul" --backend cuda --dtype f32 --shapes "$SHAPES" \
	--budget "$budget" --top 2 --time-limit 0.3 --min-time 0.02 --warmup 0.02 \
	--csv "$out/tune.csv" --table "$out/user_matmul5-table.csv" \
	--header "$out/user_matmul5_tune.h" --metal-header "$out/user_matmul5_tune.metal" | tee "$out/tune.log"
echo "== tuned in $(($(date +%s) - start)) s; the table:" >&2
"$bin" report --kernel "$root/examples/tune_matmul" "$out/user_matmul5-table.csv" | tee "$out/table.txt"

echo "== nvcc table_demo.cu" >&2
"$nvcc" -O3 -std=c++17 -arch=native -I "$out" -I "$root/examples/tune_matmul" \
	-o "$out/table_demo" "$root/examples/tune_matmul/table_demo.cu"
echo "== table_demo" >&2
"$out/table_demo" | tee "$out/table_demo.txt"
