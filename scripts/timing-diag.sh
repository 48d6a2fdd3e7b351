#!/usr/bin/env bash
# Diagnose the gap between mltop's event timing and ncu (issue 12): see
# timing-diag.py. Also runs mltop on the two kernels that missed +-3%
# (rmsnorm_bwd, embedding_bwd) cold and hot, with ncu in both cache
# modes and the SM clock ncu saw, and logs nvidia-smi clocks meanwhile.
# Usage: scripts/timing-diag.sh [BINARY]
set -uo pipefail
M=${1:-.gpu/mltop}
LOG=${OUT:-/tmp/mltop-diag}
mkdir -p "$LOG"
D=$(dirname "$0")
which ncu
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv
for n in 1024 1048576 4194304 16777216 67108864; do
	python3 "$D/timing-diag.py" events $n 300 2>&1 | grep -E "DIAG|Error" | tail -3
	ncu --cache-control all --clock-control none --metrics gpu__time_duration.sum -k regex:elementwise --launch-skip 10 --launch-count 20 --csv \
		python3 "$D/timing-diag.py" ncu $n 40 >"$LOG/ncu-add-$n.csv" 2>&1
	echo "NCU n=$n gpu__time_duration_ns (median, count): $(python3 "$D/ncu_csv.py" "$LOG/ncu-add-$n.csv" gpu__time_duration.sum)"
done
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv,noheader,nounits -lms 50 >"$LOG/smi.csv" 2>/dev/null &
SMI=$!
for spec in "rmsnorm_bwd|bf16|rows=8192,D=2048|rmsnorm_bwd" "embedding_bwd|f32|tokens=8192,vocab=32000,D=2048|embedding_bwd" "softmax_bwd|f32|rows=4096,cols=8192|softmax_bwd"; do
	IFS='|' read -r kernel dtype set dispatch <<<"$spec"
	for cache in cold hot; do
		s=$(date +%s.%N)
		MLTOP_CUDA_TIMER=${MLTOP_CUDA_TIMER:-} "$M" run "$kernel" --set "$set" --dtype "$dtype" --backend cuda --isolate off --quiet --json --cache $cache >"$LOG/m-$kernel-$cache.json" 2>&1
		e=$(date +%s.%N)
		python3 - "$LOG/m-$kernel-$cache.json" "$dispatch" "$kernel $cache" "$s" "$e" "$LOG/smi.csv" <<'PY'
import json, sys, datetime
r = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")][0]
med = r["stats"]["median_ns"]
for d in r.get("per_dispatch") or []:
    if d["name"] == sys.argv[2]:
        med = d["stats"]["median_ns"]
s, e = float(sys.argv[4]), float(sys.argv[5])
clk = []
for line in open(sys.argv[6]):
    f = [x.strip() for x in line.split(",")]
    try:
        t = datetime.datetime.strptime(f[0], "%Y/%m/%d %H:%M:%S.%f").timestamp()
    except Exception:
        continue
    if s <= t <= e:
        clk.append(float(f[1]))
print(f"MLTOP {sys.argv[3]}: {med/1e3:.2f} us n={r['stats']['n']} status={r['status']} sm_clock={sum(clk)/max(len(clk),1):.0f}MHz({len(clk)} reads, min {min(clk) if clk else 0:.0f})")
PY
	done
	for cc in all none; do
		MLTOP_CUDA_TIMER=events ncu --cache-control $cc --clock-control none --metrics gpu__time_duration.sum,gpc__cycles_elapsed.avg.per_second,dram__bytes.sum -k "regex:^${dispatch}\$" --launch-skip 3 --launch-count 15 --csv \
			"$M" run "$kernel" --set "$set" --dtype "$dtype" --backend cuda --isolate off --quiet --json --cache $([ $cc = all ] && echo cold || echo hot) \
			--min-samples 20 --max-samples 20 --min-time 0.000001 --warmup 0.000001 --time-limit 60 >"$LOG/ncu-$kernel-$cc.csv" 2>&1
		echo "NCU $kernel ncu-cache-$cc $(python3 "$D/ncu_csv.py" "$LOG/ncu-$kernel-$cc.csv")"
	done
done
kill $SMI
