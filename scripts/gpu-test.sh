#!/usr/bin/env bash
# Build mltop and the test binaries with CGO_ENABLED=0 into .gpu/ (git
# ignored), ready to carry to a GPU machine; then, with --run (on the GPU
# machine, from the repository root), run the GPU tests and a short sweep.
#
#   scripts/gpu-test.sh            # build here
#   scripts/gpu-test.sh --run      # run there (no Go needed)
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ "${1:-}" != "--run" ]]; then
	mkdir -p .gpu
	export CGO_ENABLED=0 GOOS=linux GOARCH=amd64
	if [[ -f main.go ]]; then go build -o .gpu/mltop . || echo "warning: mltop did not build; running the test binaries only" >&2; fi
	go test -c -o .gpu/cuda.test ./cuda/
	for p in profiler kernels/all; do
		[[ -d $p ]] && go test -c -o ".gpu/${p//\//_}.test" "./$p/" 2>/dev/null || true
	done
	cp scripts/cuda-*.sh scripts/*.py .gpu/ 2>/dev/null || true
	ls -la .gpu
	exit 0
fi

# On the GPU machine.
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv || true
export MLTOP_CUDA_CACHE=${MLTOP_CUDA_CACHE:-/tmp/mltop-cuda-cache}
status=0
(cd cuda && ../.gpu/cuda.test -test.v -test.run "${GPU_TESTS:-.}" -test.timeout 600s) || status=1
root=$(pwd)
for p in profiler kernels/all; do
	t="$root/.gpu/${p//\//_}.test"
	[[ -x $t ]] && { (cd "$p" && "$t" -test.timeout 300s) || status=1; }
done
if [[ -x .gpu/mltop ]]; then
	.gpu/mltop list || status=1
	if [[ -f configs/quick.yaml ]]; then .gpu/mltop --backend cuda --config configs/quick.yaml --csv /tmp/quick.csv || status=1; fi
fi
exit $status
