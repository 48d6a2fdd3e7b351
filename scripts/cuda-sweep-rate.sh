#!/usr/bin/env bash
# Sweep rate and reproducibility at default settings (issue 12, item 2):
# 99 attn_fwd configs, bf16 B=1 H=32 L=2048 D=128 (every BQ/WM/BK/WN tile
# valid on CUDA with BQ >= 32: kernels of ~0.25-3 ms), three times back
# to back:
#   run 1  empty compile cache (every program through NVRTC)   target >= 1.5 configs/s
#   run 2  warm compile cache (cubins from the disk cache)      target >= 5 configs/s
#   run 3  warm again: its medians against run 2's, row by row
#          target: within 1% on >= 95% of rows, within 2% on all
# plus where each spec's wall time went (Result.phases), per run, and the
# share of each run the GPU measured, and ran kernels (the checks' runs
# counted too: verify_gpu).
#
# RACE=F (e.g. RACE=1.1) adds --race F to runs 2 and 3 (warm): a config
# clearly slower than F x the best so far stops sampling early (outpaced).
# The rate is then against do_bench as before, plus how many rows each run
# outpaced, and the run 2 vs run 3 agreement apart for the rows neither
# run outpaced (measured to the stopping rule) and for the rest.
#
# Usage: [RACE=F] scripts/cuda-sweep-rate.sh [BINARY]   (default .gpu/mltop)
# Logs under $OUT (or /tmp/mltop-sweep-rate). About 1-2 minutes.
set -uo pipefail
M=${1:-.gpu/mltop}
LOG=${OUT:-/tmp/mltop-sweep-rate}
RACE=${RACE:-}
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/sweep99.sh"
sweep99_setup "$LOG"
for run in 1 2 3; do
	race=()
	if [ -n "$RACE" ] && [ "$run" != 1 ]; then
		race=(--race "$RACE")
	fi
	start=$(date +%s.%N)
	"$M" --config "$LOG/sweep99.yaml" --json --quiet --phases ${race[@]+"${race[@]}"} >"$LOG/run$run.jsonl" 2>"$LOG/run$run.err"
	rc=$?
	end=$(date +%s.%N)
	echo "$run $start $end $rc" >>"$LOG/times"
	grep -v '^mltop: phases [^1]' "$LOG/run$run.err" | tail -3
done
# the do_bench loop over as many calls, in the same run (on the same GPU)
python3 "$HERE/dobench_rate.py" 99 >"$LOG/dobench.txt" 2>"$LOG/dobench.err" || tail -3 "$LOG/dobench.err"

python3 - "$LOG" "$HERE" "$RACE" <<'PY'
import sys
log, here, race = sys.argv[1], sys.argv[2], sys.argv[3]
sys.path.insert(0, here)
import importlib.util
import sweep_agreement
spec = importlib.util.spec_from_file_location("ps", f"{here}/phases-summary.py")
ps = importlib.util.module_from_spec(spec); spec.loader.exec_module(ps)
times = {}
for line in open(f"{log}/times"):
    run, a, b, rc = line.split()
    times[run] = (float(b) - float(a), rc)
runs = {r: ps.load(f"{log}/run{r}.jsonl") for r in times}
print()
print("SWEEP RATE: 99 attn_fwd bf16 configs, B=1 H=32 L=2048 D=128, default settings"
      + (f", --race {race} in runs 2 and 3" if race else ""))
names = {"1": "empty compile cache", "2": "warm compile cache", "3": "warm, again"}
for r, rows in runs.items():
    dt, rc = times[r]
    print(f"  run {r} ({names[r]}): {len(rows)} configs in {dt:.1f} s = {len(rows)/dt:.2f} configs/s (exit {rc})")
for r, rows in runs.items():
    ps.summary(f"  run {r}", rows)
    # over the process's wall time (mltop's own line below counts from its
    # first worker's start): measuring, and with the checks' kernel runs
    measuring, running = ps.device_seconds(rows)
    dt = times[r][0]
    line = f"  run {r}: GPU measuring {100 * measuring / dt:.0f}% of the process's {dt:.2f} s"
    if running > measuring:
        line += f", running kernels {100 * running / dt:.0f}% (with the checks' runs {running - measuring:.2f} s)"
    print(line)
    for l in open(f"{log}/run{r}.err"):
        if l.startswith("mltop: phases 1 device in "):
            print(f"  run {r}: {l.strip()[len('mltop: phases '):]}")
try:
    db = open(f"{log}/dobench.txt").read().split()
    rate = float(db[db.index("calls/s") - 1])
    print(f"  do_bench loop (Triton, defaults, SDPA at the same shape): {' '.join(db[1:])}")
    for r in ("2", "3"):
        if r in runs:
            print(f"  run {r} against the do_bench loop: {len(runs[r]) / times[r][0] / rate:.2f}x")
except (OSError, ValueError, IndexError):
    print("  do_bench loop: not measured (see dobench.err)")

def repro(a, b, label):
    devs = [(abs(y / x - 1), k, x, y) for _, k, x, y in sweep_agreement.pairs(a, b)]
    if not devs:
        print(f"REPRODUCIBILITY {label}: no common ok rows")
        return
    devs.sort(key=lambda d: d[0])
    n = len(devs)
    w1 = sum(d[0] <= 0.01 for d in devs)
    w2 = sum(d[0] <= 0.02 for d in devs)
    print(f"REPRODUCIBILITY {label}: {n} rows, {100*w1/n:.1f}% within 1% (target >= 95%), "
          f"{100*w2/n:.1f}% within 2% (target 100%), median dev {100*devs[n//2][0]:.2f}%, max {100*devs[-1][0]:.2f}%")
    for d, k, x, y in devs[-3:]:
        print(f"    worst: {k}: {x/1e3:.1f} vs {y/1e3:.1f} us ({100*d:.2f}%)")

if race:
    for r in ("2", "3"):
        if r in runs:
            out = sum(row.get("stop_reason") == "outpaced" for row in runs[r])
            print(f"  run {r}: {out} of {len(runs[r])} rows outpaced (--race {race})")

if "2" in runs and "3" in runs and race:
    def outpaced(rows):
        return {sweep_agreement.key(r) for r in rows if r.get("stop_reason") == "outpaced"}
    either = outpaced(runs["2"]) | outpaced(runs["3"])
    def part(rows, keep):
        return [r for r in rows if (sweep_agreement.key(r) in either) == keep]
    repro(part(runs["2"], False), part(runs["3"], False), "run 2 vs run 3, rows neither run outpaced")
    repro(part(runs["2"], True), part(runs["3"], True), "run 2 vs run 3, rows outpaced in either run")
elif "2" in runs and "3" in runs:
    repro(runs["2"], runs["3"], "run 2 vs run 3")
if "1" in runs and "2" in runs:
    repro(runs["1"], runs["2"], "run 1 vs run 2")
PY
