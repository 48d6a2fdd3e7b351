#!/usr/bin/env bash
# The seed-kernel families (sdpa_multi, gated_delta_chunk, rmsnorm_bwd,
# cross_entropy, embedding_bwd, transpose) on an NVIDIA GPU.
#
#   scripts/training-ops-gpu.sh          # here: build .gpu/train/mltop (CGO off)
#   scripts/training-ops-gpu.sh --run    # on the GPU machine, repo root:
#        the device's copy bandwidth through torch, a small correctness
#        sweep of every family and dtype, then both configs; CSVs go to
#        $OUT (or /tmp) as smoke.csv, training.csv and sdpa_gated.csv.
#   SMOKE=0 ... --run                    # skip the correctness sweep
#   CONFIGS=training ... --run           # the smoke sweep and only these configs
#                                        # (training, sdpa_gated; "" for none)
set -uo pipefail
cd "$(dirname "$0")/.."
if [[ "${1:-}" != "--run" ]]; then
	mkdir -p .gpu/train
	CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go build -o .gpu/train/mltop . && ls -la .gpu/train/mltop
	exit $?
fi

out=${OUT:-/tmp}
export MLTOP_CUDA_CACHE=${MLTOP_CUDA_CACHE:-/tmp/mltop-cuda-cache}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader || true
python3 scripts/training-ops-copybw.py | tee /tmp/copybw.txt || true
copy=$(sed -n 's/^copy bandwidth: \([0-9]*\) GB.*/\1/p' /tmp/copybw.txt); copy=${copy:--}

cat >/tmp/training-smoke.yaml <<'YAML'
backend: cuda
defaults: {time_limit: 0.2, min_time: 0.02, noise: 0.1}
sweeps:
  - {kernel: transpose, dtypes: [f32, f16, bf16], knobs: {TILE: [16, 64], WG: 256, VEC: [1, 2, 4]}, dims: {rows: 257, cols: 1000}}
  - {kernel: transpose, dtypes: [bf16], knobs: {TILE: 32, WG: 128, VEC: 4}, dims: {rows: 256, cols: 1000}}
  - {kernel: rmsnorm_bwd, dtypes: [f32], knobs: {WG: 128, VEC: [1, 4], RPG: 4}, dims: {rows: 67, D: 1000}}
  - {kernel: rmsnorm_bwd, dtypes: [f16, bf16], knobs: {WG: 128, VEC: [2, 8], RPG: 4}, dims: {rows: 67, D: 1000}}
  - {kernel: rmsnorm_bwd, dtypes: [f32], knobs: {WG: 128, VEC: [1, 4], RPG: 4, RB: [1, 2], ST: 4}, dims: {rows: 67, D: 1000}}
  - {kernel: rmsnorm_bwd, dtypes: [f16, bf16], knobs: {WG: 128, VEC: [2, 8], RPG: [4, 8], RB: 1, ST: [2, 3]}, dims: {rows: 67, D: 1000}}
  - {kernel: cross_entropy, dtypes: [f32], knobs: {WG: 128, VEC: [1, 4]}, dims: {rows: 200, vocab: 1000, pad_id: 7}}
  - {kernel: cross_entropy, dtypes: [f16, bf16], knobs: {WG: 128, VEC: 8}, dims: {rows: 200, vocab: 1000, pad_id: 7}}
  - {kernel: cross_entropy, dtypes: [bf16], knobs: {WG: 64, VEC: 2}, dims: {rows: 64, vocab: 10, pad_id: 3}}
  - {kernel: cross_entropy, dtypes: [f32], knobs: {WG: 128, VEC: [1, 4], CL: [1, 2, 8]}, dims: {rows: 200, vocab: 1000, pad_id: 7}}
  - {kernel: cross_entropy, dtypes: [f16, bf16], knobs: {WG: 128, VEC: 8, CL: [1, 4, 8]}, dims: {rows: 200, vocab: 1000, pad_id: 7}}
  - {kernel: cross_entropy, dtypes: [bf16], knobs: {WG: 64, VEC: 2, CL: [1, 8]}, dims: {rows: 64, vocab: 10, pad_id: 3}}
  - {kernel: cross_entropy, dtypes: [bf16], knobs: {WG: 256, VEC: 8, CL: [0, 2]}, dims: {rows: 3, vocab: 152064, pad_id: -1}}
  - {kernel: embedding_bwd, dtypes: [f32], knobs: {WG: 64, VEC: [1, 4], TPG: 4}, dims: {tokens: 500, vocab: 50, D: 96}}
  - {kernel: embedding_bwd, dtypes: [f16, bf16], knobs: {WG: 64, VEC: [4, 8], TPG: 1}, dims: {tokens: 500, vocab: 50, D: 96}}
  - {kernel: embedding_bwd, dtypes: [f32], knobs: {WG: 64, VEC: [1, 4], TPG: [1, 4], GATHER: 1}, dims: {tokens: 500, vocab: 50, D: 96}}
  - {kernel: embedding_bwd, dtypes: [f16, bf16], knobs: {WG: 64, VEC: [2, 8], TPG: 1, GATHER: 1}, dims: {tokens: 500, vocab: 50, D: 96}}
  - {kernel: embedding_bwd, dtypes: [bf16], knobs: {WG: 128, VEC: 4, TPG: 2, GATHER: 1}, dims: {tokens: 3000, vocab: 5001, D: 64}}
  - {kernel: embedding_bwd, dtypes: [f32, bf16], knobs: {WG: 64, VEC: 4, TPG: [16, 32], GATHER: [0, 1]}, dims: {tokens: 500, vocab: 50, D: 96}}
  - {kernel: sdpa_multi, dtypes: [f32, f16, bf16], knobs: {TPG: [32, 1024]}, dims: {n_query: 5, H: 4, Hkv: 2, D: [64, 128, 256], base_kv: 100, kv_stride: 120}, flags: {causal: [true, false]}}
  - {kernel: sdpa_multi, dtypes: [bf16], knobs: {TPG: [16, 48, 2048]}, dims: {n_query: 5, H: 4, Hkv: 2, D: 128, base_kv: 100, kv_stride: 120}}
  - {kernel: gated_delta_chunk, dtypes: [bf16], knobs: {BT: [16, 64], BV: [8, 64], WG: [32, 256]}, dims: {B: 2, T: 192, H: 2, Hg: 1, K: [32, 128], V: 64}}
YAML
status=0
# Tables go to files; the log shows the rows that are not ok and the summary.
sweep() { # name config
	.gpu/train/mltop --backend cuda --quiet --no-color --config "$2" --csv "$out/$1.csv" >"$out/$1.txt" 2>&1 || status=1
	echo "== $1: $(tail -1 "$out/$1.txt")"
	grep -v ' ok ' "$out/$1.txt" | grep -v '^mltop:' | head -40
}
[[ "${SMOKE:-1}" == 1 ]] && sweep smoke /tmp/training-smoke.yaml
for c in ${CONFIGS-training sdpa_gated}; do
	case $c in
	training) sweep training configs/training_ops.yaml ;;
	sdpa_gated) sweep sdpa_gated configs/sdpa_gated.yaml ;;
	esac
done
# Per-dispatch split of embedding_bwd (zero fill vs scatter) at its config shape.
if [[ "${SPLIT:-1}" == 1 ]]; then
	.gpu/train/mltop run embedding_bwd --backend cuda --quiet --dtype bf16 --set WG=512,VEC=4,TPG=1,tokens=8192,vocab=32000,D=4096 --json 2>/dev/null |
		python3 -c 'import json,sys; r=json.loads(sys.stdin.readline()); print("embedding_bwd per dispatch:", [(d["name"], round(d["stats"]["median_ns"]/1e3, 1)) for d in r.get("per_dispatch", [])], "us")' || true
fi
python3 scripts/training-ops-summary.py "$copy" $(for c in ${CONFIGS-training sdpa_gated}; do echo "$out/$c.csv"; done) || true
exit $status
