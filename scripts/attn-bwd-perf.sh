#!/usr/bin/env bash
# attn_bwd bf16, B=1, H=32, D=128, L=4096, causal and dense: a small sweep
# of the dQ/dKV tiles (cold cache, as mltop measures), then PyTorch's
# scaled_dot_product_attention backward on the same GPU for the ratio.
#   scripts/attn-bwd-perf.sh [MLTOP] [CSV]
set -euo pipefail
mltop=${1:-./mltop}
csv=${2:-/tmp/attn-bwd-perf.csv}
here=$(dirname "$0")
cfg=$(mktemp --suffix=.yaml)
trap 'rm -f "$cfg"' EXIT
cat >"$cfg" <<'YAML'
backend: cuda
defaults:
  noise: 0.02
  min_time: 0.2
  time_limit: 2
  max_rows: 64
sweeps:
  - kernel: attn_bwd
    dtypes: [bf16]
    knobs:
      BQ_dq: [64, 128]
      BK_dq: [16, 32, 64]
      WM_dq: [4, 8]
      BQ_dkv: [32, 64]
      BK_dkv: [64, 128]
      WM_dkv: [4, 8]
    where:
      - "BQ_dq >= 16 * WM_dq"
      - "BK_dkv == 16 * WM_dkv"
    dims: {B: 1, H: 32, Hkv: 32, D: 128, Lq: 4096, Lk: 4096}
    flags: {causal: [false, true], alias: true}
YAML
# JSON lines on stdout carry the per-dispatch times (delta, dQ, dKV).
"$mltop" --backend cuda --config "$cfg" --csv "$csv" --json >"$csv.jsonl"
python3 - "$csv.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    s = r.get("spec", {})
    per = ", ".join(f"{d['name']} {d['stats']['median_ns']/1e6:.3f} ms" for d in r.get("per_dispatch") or [])
    print(s.get("knobs"), s.get("flags"), r.get("status"), per)
PY
best() {
  python3 - "$csv" "$1" <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["status"] == "ok" and r["causal"] == sys.argv[2]]
b = max(rows, key=lambda r: float(r["tflops"]))
print(b["tflops"])
print(f"best causal={sys.argv[2]}: {b['tflops']} TFLOP/s, {float(b['median_us'])/1e3:.3f} ms, BQ_dq={b['BQ_dq']} BK_dq={b['BK_dq']} WM_dq={b['WM_dq']} BQ_dkv={b['BQ_dkv']} BK_dkv={b['BK_dkv']} WM_dkv={b['WM_dkv']}", file=sys.stderr)
PY
}
dense=$(best 0)
causal=$(best 1)
python3 "$here/attn-bwd-sdpa.py" --mltop-dense "$dense" --mltop-causal "$causal"
