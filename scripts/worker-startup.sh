#!/usr/bin/env bash
# How long a CUDA worker takes to start, alone and N at once (one per GPU),
# with each step of the backend's open (MLTOP_TRACE_STARTUP).
#
# Usage: scripts/worker-startup.sh [BINARY] [N]   (default .gpu/mltop, all GPUs)
#
# Each worker must say hello and exit 0 at its input's end; when one does
# not (no GPU, no driver, a broken binary), its own error is printed and the
# script exits 1. A missing binary or a bad N exits 2.
set -uo pipefail
M=${1:-.gpu/mltop}
N=${2:-$(ls -d /proc/driver/nvidia/gpus/* 2>/dev/null | wc -l)}
LOG=${OUT:-/tmp/mltop-startup}/startup
[ -e "$M" ] || { echo "worker-startup: binary $M does not exist; build it or give its path: scripts/worker-startup.sh BINARY [N]" >&2; exit 2; }
{ [ -f "$M" ] && [ -x "$M" ]; } || { echo "worker-startup: binary $M is not an executable file" >&2; exit 2; }
[[ $N =~ ^[0-9]+$ ]] || { echo "worker-startup: N must be a number of GPUs, got '$N'" >&2; exit 2; }
[ "$N" -ge 1 ] || { echo "worker-startup: no GPU found (/proc/driver/nvidia/gpus); give N" >&2; exit 2; }
mkdir -p "$LOG"
rm -f "$LOG"/*.out "$LOG"/*.err "$LOG"/*.time "$LOG"/*.rc # a stale file of an earlier run must not pass for this one
one() { # $1 GPU, $2 tag: time to hello (the worker exits at stdin's end)
	local t0 t1
	t0=$(date +%s%N)
	CUDA_VISIBLE_DEVICES=$1 MLTOP_TRACE_STARTUP=1 "$M" worker --backend cuda </dev/null >"$LOG/$2.out" 2>"$LOG/$2.err"
	echo $? >"$LOG/$2.rc"
	t1=$(date +%s%N)
	echo "$2 gpu$1 $(((t1 - t0) / 1000000)) ms to exit after hello" >"$LOG/$2.time"
}
# started TAG…: each worker said hello and exited 0; else its error and exit 1.
started() {
	local tag rc why bad=0
	for tag in "$@"; do
		rc=$(cat "$LOG/$tag.rc")
		if ! grep -q '"type":"hello"' "$LOG/$tag.out"; then
			why="never said hello (exit $rc)"
		elif [ "$rc" != 0 ]; then
			why="said hello but exited $rc"
		else
			continue
		fi
		bad=1
		echo "worker-startup: worker $tag $why; its stderr ($LOG/$tag.err, last 20 lines):" >&2
		tail -n 20 "$LOG/$tag.err" | sed 's/^/    /' >&2
		[ -s "$LOG/$tag.err" ] || echo "    (empty)" >&2
	done
	[ "$bad" = 0 ] || { echo "worker-startup: no timing: a CUDA worker did not start (see its error above)" >&2; exit 1; }
}
for rep in 1 2 3; do
	one 0 "alone$rep"
	started "alone$rep"
done
for rep in 1 2; do
	tags=()
	for ((g = 0; g < N; g++)); do
		one "$g" "all${rep}_$g" &
		tags+=("all${rep}_$g")
	done
	wait
	started "${tags[@]}"
done
for f in "$LOG"/*.time; do
	cat "$f"
	grep 'start-up' "${f%.time}.err" | sed 's/^/    /'
done
