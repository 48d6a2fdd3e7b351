#!/usr/bin/env bash
# Calibration on the GPU machine, from the repository root after
# scripts/gpu-test.sh built .gpu/: the GPU test (NVRTC compile from an empty
# cache, figures, plausibility against the datasheet, a second calibration
# with the cubins cached), then `mltop calibrate --backend cuda` where the
# CLI has it, with its caches in /tmp so nothing stale is reused.
set -uo pipefail
status=0
(cd cuda && ../.gpu/cuda.test -test.v -test.run '^TestCalibrate$' -test.timeout 120s) || status=1
M=${MLTOP:-.gpu/mltop}
if [[ -x $M ]]; then
	export MLTOP_CACHE_DIR=${MLTOP_CACHE_DIR:-/tmp/mltop-calibrate-home} MLTOP_CUDA_CACHE=${MLTOP_CUDA_CACHE:-/tmp/mltop-calibrate-cubins}
	start=$(date +%s.%N)
	$M calibrate --backend cuda || status=1
	echo "mltop calibrate took $(python3 -c "print(f'{$(date +%s.%N) - $start:.2f}')") s (process start and NVRTC included)"
	find "$MLTOP_CACHE_DIR" -name '*.json' -exec cat {} \; 2>/dev/null
fi
exit $status
