#!/usr/bin/env bash
# Calibration on the GPU machine, from the repository root after
# scripts/gpu-test.sh built .gpu/: the GPU test (NVRTC compile from an empty
# cache, figures, plausibility against the datasheet, a second calibration
# with the cubins cached), then `mltop calibrate --backend cuda` where the
# CLI has it, with its caches in /tmp so nothing stale is reused.
set -uo pipefail
status=0
T=${CUDA_TEST:-.gpu/cuda.test}
(cd cuda && "../$T" -test.v -test.run '^TestCalibrate$' -test.timeout 120s) || status=1
M=${MLTOP:-.gpu/mltop}
if [[ -x $M ]]; then
	export MLTOP_CACHE_DIR=${MLTOP_CACHE_DIR:-/tmp/mltop-calibrate-home} MLTOP_CUDA_CACHE=${MLTOP_CUDA_CACHE:-/tmp/mltop-calibrate-cubins}
	start=$(date +%s.%N)
	$M calibrate --backend cuda || status=1
	echo "mltop calibrate took $(python3 -c "print(f'{$(date +%s.%N) - $start:.2f}')") s (process start and NVRTC included)"
	find "$MLTOP_CACHE_DIR" -name '*.json' -exec cat {} \; 2>/dev/null
	# What the compiler made of the micro-kernels: registers and spills, and
	# the matrix/FMA/16-byte instructions per kernel (HMMA, FFMA, LDG.E.128).
	if command -v cuobjdump >/dev/null; then
		for f in "$MLTOP_CUDA_CACHE"/*; do
			cuobjdump -res-usage "$f" 2>/dev/null | grep -A1 'Function cal_'
			cuobjdump -sass "$f" 2>/dev/null | awk '/Function : /{fn=$3} /HMMA/{h[fn]++} /FFMA/{f[fn]++} /LDG.E.128/{l[fn]++} END{for (k in h) print k": "h[k]" HMMA"; for (k in f) print k": "f[k]" FFMA"; for (k in l) print k": "l[k]" LDG.E.128"}'
		done
	fi
fi
exit $status
