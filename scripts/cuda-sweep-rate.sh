#!/usr/bin/env bash
# Sweep rate: configs per second for a 100-config attn_fwd sweep, first with
# an empty compile cache (every program compiled by NVRTC), then again (every
# cubin from the disk cache). Kernels of 0.05-2 ms at the default noise
# target, with the per-spec time limit capped at 0.5 s (TIME_LIMIT) so that
# the few that never reach 1% do not dominate. Run on the GPU machine from
# the repository root.
set -uo pipefail
M=${MLTOP:-.gpu/mltop}
cat >/tmp/sweep100.yaml <<YAML
backend: cuda
defaults:
  time_limit: ${TIME_LIMIT:-0.5}
sweeps:
  - kernel: attn_fwd
    dtypes: [bf16]
    knobs: {BQ: [16, 32, 64, 128], BK: [8, 16, 32, 64, 128], WM: [1, 2, 4, 8], WN: 1}
    dims: {B: 1, H: 32, Hkv: 32, Lq: 2048, Lk: 2048, D: 64}
    flags: {causal: [false, true]}
    where: ["BQ % (16*WM) == 0"]
YAML
export MLTOP_CUDA_CACHE=/tmp/mltop-sweep-cache
rm -rf "$MLTOP_CUDA_CACHE"
for run in first second; do
	start=$(date +%s.%N)
	$M --config /tmp/sweep100.yaml --backend cuda --csv /tmp/sweep-$run.csv --quiet >/tmp/sweep-$run.out 2>/tmp/sweep-$run.err
	rc=$?
	end=$(date +%s.%N)
	python3 - "$run" "$start" "$end" "$rc" <<'PY'
import csv, sys
run, start, end, rc = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
rows = list(csv.DictReader(open(f"/tmp/sweep-{run}.csv")))
st = {}
for r in rows:
    st[r.get("status", "?")] = st.get(r.get("status", "?"), 0) + 1
dt = end - start
print(f"SWEEP {run} run (compile cache {'empty' if run == 'first' else 'warm'}): {len(rows)} configs in {dt:.1f} s = {len(rows)/dt:.2f} configs/s; statuses {st}; exit {rc}")
PY
	tail -3 /tmp/sweep-$run.err
done
