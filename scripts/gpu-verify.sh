#!/usr/bin/env bash
# One pass over everything that runs on CUDA, for a single GPU session:
# the cuda/ GPU tests, the attention-backward correctness sweep, the
# seed-kernel smoke sweep, the quick config and the selftest.
#
#   scripts/gpu-verify.sh          # here: build .gpu/ (CGO off)
#   scripts/gpu-verify.sh --run    # on the GPU machine, repo root; CSVs and logs to $OUT
set -uo pipefail
cd "$(dirname "$0")/.."
if [[ "${1:-}" != "--run" ]]; then
	rm -rf .gpu && mkdir -p .gpu/train
	export CGO_ENABLED=0 GOOS=linux GOARCH=amd64
	go build -o .gpu/mltop . && go test -c -o .gpu/cuda.test ./cuda/ || exit 1
	cp .gpu/mltop .gpu/train/mltop
	du -sh .gpu
	exit 0
fi
out=${OUT:-/tmp}
mkdir -p "$out"
export MLTOP_CUDA_CACHE=/tmp/mltop-cuda-cache MLTOP_CACHE_DIR=/tmp/mltop-cache
status=0
step() { printf '\n== %s\n' "$*"; }
step "cuda tests"
(cd cuda && ../.gpu/cuda.test -test.run 'Test[^B]' -test.timeout 400s >"$out/cuda-tests.log" 2>&1) || status=1
grep -E '^(--- |ok|FAIL|PASS)' "$out/cuda-tests.log" | grep -v -- '--- PASS' | head -30
grep -c -- '--- PASS' "$out/cuda-tests.log"
step "attention backward correctness"
scripts/attn-bwd-check.sh .gpu/mltop cuda "$out/bwd-check.csv" >"$out/bwd-check.log" 2>&1 || status=1
tail -3 "$out/bwd-check.log"
step "seed kernels smoke"
SMOKE=1 CONFIGS="" SPLIT=0 scripts/training-ops-gpu.sh --run 2>&1 | grep -E '^== |not ok|invalid|mismatch|crash|error' | head -20
step "quick config and selftest"
.gpu/mltop --backend cuda --quiet --config configs/quick.yaml --csv "$out/quick.csv" >/dev/null 2>"$out/quick.log" || status=1
tail -1 "$out/quick.log"
.gpu/mltop selftest --backend cuda 2>&1 | tail -12 || status=1
echo "verify status $status"
exit $status
