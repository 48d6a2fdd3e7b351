#!/usr/bin/env bash
# Why do 10–40 µs kernels read lower in mltop than in Nsight Compute? This
# measures one memory-bound kernel (examples/timer_probe, an RMS-norm
# forward) at sizes from ~3 to ~200 µs four ways — mltop's median, ncu's
# gpu__time_duration, CUDA events around the single launch, and the kernel's
# own first-block-start → last-block-end span on %globaltimer — plus the
# probe's own cost, the launch-to-start gap, the SM clock after the flush and
# under ncu, and the timer's resolution; then mltop against ncu on three
# built-in short kernels. One table and fits at the end (scripts/timer_probe.py).
#
# Usage: scripts/timer-probe-gpu.sh [BINARY]     (default .gpu/mltop)
# Needs bash, nvcc, ncu, python3 (no NumPy: without it mltop runs the probe
# kernel unchecked). Under 5 minutes on an H100. Environment:
#   OUT        where the logs go (default /tmp/mltop-timer-probe)
#   SIZES      "ROWSxCOLS ..." of the probe kernel
#   REPS       launches per size and variant of timer_probe run (default 50)
#   NCU_REPS   launches per size and variant under ncu (default 22, 2 skipped)
#   BUILTINS   "label|kernel|dtype|set|dispatch;..." built-in specs to compare
#   NVCC_ARCH  nvcc -arch (default native)
set -uo pipefail
M=${1:-.gpu/mltop}
D=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$D")
LOG=${OUT:-/tmp/mltop-timer-probe}
SIZES=${SIZES:-"256x1024 1024x1024 2048x2048 2048x4096 3072x4096 4096x4096 8192x4096 16384x4096"}
REPS=${REPS:-50}
NCU_REPS=${NCU_REPS:-22}
BUILTINS=${BUILTINS:-"rmsnorm_bwd|rmsnorm_bwd|bf16|rows=4096,D=2048|rmsnorm_bwd;softmax_bwd|softmax_bwd|bf16|rows=2048,cols=3072|softmax_bwd;embedding_bwd|embedding_bwd|f32|tokens=4096,vocab=32000,D=2048|embedding_bwd"}
export PATH="$PATH:/usr/local/cuda/bin"
START=$SECONDS
say() { echo "[timer-probe +$((SECONDS - START))s] $*" >&2; }

for tool in nvcc ncu python3; do
	command -v "$tool" >/dev/null || { echo "timer-probe-gpu.sh: $tool is not on the PATH: install the CUDA toolkit (nvcc, ncu) and python3" >&2; exit 2; }
done
[ -x "$M" ] || { echo "timer-probe-gpu.sh: $M is not an executable mltop: build one (CGO_ENABLED=0 go build -o .gpu/mltop .) and pass its path" >&2; exit 2; }
python3 "$D/timer_probe.py" selftest >/dev/null || { echo "timer-probe-gpu.sh: scripts/timer_probe.py selftest failed" >&2; exit 1; }
mkdir -p "$LOG"
: >"$LOG/builtins.txt"
echo "$SIZES" >"$LOG/sizes.txt"

# mltop checks the probe kernel with ref.py, which needs NumPy; without it,
# a copy of the example with `check: none` (the run is then `unchecked`).
EX="$ROOT/examples/timer_probe"
if ! "${MLTOP_PYTHON:-python3}" -c 'import numpy' 2>/dev/null; then
	mkdir -p "$LOG/timer_probe_unchecked"
	cp "$EX"/*.cu "$LOG/timer_probe_unchecked/"
	sed 's/^check: .*/check: none/' "$EX/kernel.yaml" >"$LOG/timer_probe_unchecked/kernel.yaml"
	EX="$LOG/timer_probe_unchecked"
	say "no NumPy for ${MLTOP_PYTHON:-python3}: the probe kernel runs unchecked"
fi

# A failed build leaves the mltop and built-in columns to fill (no event,
# probe or ncu numbers for the probe kernel).
say "building timer_probe (nvcc -arch=${NVCC_ARCH:-native})"
rm -f "$LOG/timer_probe"
nvcc -O3 -std=c++17 -arch="${NVCC_ARCH:-native}" -o "$LOG/timer_probe" "$D/timer_probe.cu" ||
	{ [ -z "${NVCC_ARCH:-}" ] && say "retrying with -arch=sm_90" && nvcc -O3 -std=c++17 -arch=sm_90 -o "$LOG/timer_probe" "$D/timer_probe.cu"; } ||
	say "nvcc failed: no event, probe or ncu numbers for the probe kernel"
PROBER="$LOG/timer_probe"
[ -x "$PROBER" ] || PROBER=false
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv,noheader 2>/dev/null | sed 's/^/# /'

say "globaltimer resolution, events and probe spans"
# shellcheck disable=SC2086
{ timeout 120 "$PROBER" resolution && timeout 120 "$PROBER" run --reps "$REPS" $SIZES; } >"$LOG/probe.txt" 2>&1 || say "timer_probe failed: see $LOG/probe.txt"
grep -v '^TP size' "$LOG/probe.txt" >&2

for size in $SIZES; do
	rows=${size%x*} cols=${size#*x}
	for p in 0 1; do
		say "$size PROBE=$p: ncu, mltop"
		rm -f "$LOG/ncu-$size-p$p.csv" # no stale numbers when the prober is missing
		[ "$PROBER" = false ] || timeout 120 ncu --cache-control all --clock-control none --metrics gpu__time_duration.sum -k regex:rmsnorm_rows \
			--launch-skip 2 --csv "$PROBER" ncu "$p" "$NCU_REPS" "$size" >"$LOG/ncu-$size-p$p.csv" 2>&1
		timeout 120 "$M" run "$EX" --set "rows=$rows,cols=$cols,PROBE=$p" --backend cuda --isolate off --quiet --json \
			>"$LOG/mltop-$size-p$p.json" 2>"$LOG/mltop-$size-p$p.err"
	done
done

# Built-in kernels, as scripts/timing-diag.sh: mltop at its defaults, then
# ncu over mltop (events: ncu and CUPTI's activity API do not share).
IFS=';' read -r -a specs <<<"$BUILTINS"
for spec in "${specs[@]}"; do
	IFS='|' read -r label kernel dtype set dispatch <<<"$spec"
	echo "$spec" >>"$LOG/builtins.txt"
	say "$kernel $dtype $set: mltop, ncu"
	timeout 120 "$M" run "$kernel" --set "$set" --dtype "$dtype" --backend cuda --isolate off --quiet --json \
		>"$LOG/builtin-$label-mltop.json" 2>"$LOG/builtin-$label-mltop.err"
	MLTOP_CUDA_TIMER=events timeout 180 ncu --cache-control all --clock-control none --metrics gpu__time_duration.sum \
		-k "regex:^${dispatch}\$" --launch-skip 3 --launch-count 15 --csv \
		"$M" run "$kernel" --set "$set" --dtype "$dtype" --backend cuda --isolate off --quiet --json --cache cold \
		--min-samples 20 --max-samples 20 --min-time 0.000001 --warmup 0.000001 --time-limit 60 >"$LOG/builtin-$label-ncu.csv" 2>&1
done

say "done; logs in $LOG"
python3 "$D/timer_probe.py" table "$LOG"
