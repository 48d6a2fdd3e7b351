#!/usr/bin/env bash
# How long a CUDA worker takes to start, alone and N at once (one per GPU),
# with each step of the backend's open (MLTOP_TRACE_STARTUP).
#
# Usage: scripts/worker-startup.sh [BINARY] [N]   (default .gpu/mltop, all GPUs)
set -uo pipefail
M=${1:-.gpu/mltop}
N=${2:-$(ls -d /proc/driver/nvidia/gpus/* 2>/dev/null | wc -l)}
LOG=${OUT:-/tmp/mltop-startup}/startup
mkdir -p "$LOG"
one() { # $1 GPU, $2 tag: time to hello (the worker exits at stdin's end)
	local t0 t1
	t0=$(date +%s%N)
	CUDA_VISIBLE_DEVICES=$1 MLTOP_TRACE_STARTUP=1 "$M" worker --backend cuda </dev/null >"$LOG/$2.out" 2>"$LOG/$2.err"
	t1=$(date +%s%N)
	echo "$2 gpu$1 $(((t1 - t0) / 1000000)) ms to exit after hello" >"$LOG/$2.time"
}
for rep in 1 2 3; do one 0 "alone$rep"; done
for rep in 1 2; do
	for ((g = 0; g < N; g++)); do one "$g" "all${rep}_$g" & done
	wait
done
for f in "$LOG"/*.time; do
	cat "$f"
	grep 'start-up' "${f%.time}.err" | sed 's/^/    /'
done
