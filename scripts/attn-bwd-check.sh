#!/usr/bin/env bash
# Correctness sweep of the three attention-backward families on small
# shapes: every dtype, dense and causal, GQA, ragged lengths (Lq, Lk not
# multiples of the tiles), Lq > Lk (fully masked rows), the additive mask,
# the red_smem alias and D = 64, 96, 128, 256. Every row must be ok.
#   scripts/attn-bwd-check.sh [MLTOP] [BACKEND] [CSV]
set -euo pipefail
mltop=${1:-./mltop}
backend=${2:-cuda}
csv=${3:-/tmp/attn-bwd-check.csv}
cfg=$(mktemp --suffix=.yaml)
trap 'rm -f "$cfg"' EXIT
cat >"$cfg" <<'YAML'
backend: auto
defaults:
  time_limit: 0.2
  min_time: 0.01
  min_samples: 2
  warmup: 0.01
  hot: true
  max_rows: 4096
sweeps:
  - kernel: attn_bwd_atomic
    dtypes: [f32, f16, bf16]
    knobs: {BQ: 32, BK: 16, WM: 2, WN: 2}
    dims: {B: 2, H: 4, Hkv: 2, Lq: 77, Lk: 90, D: [64, 96, 128]}
    flags: {causal: [false, true], mask: [false, true]}
  - kernel: attn_bwd_atomic
    dtypes: [bf16]
    knobs: {BQ: 16, BK: 16, WM: 1, WN: 1}
    dims: {B: 1, H: 2, Hkv: 1, Lq: 50, Lk: 33, D: 256}
    flags: {causal: [false, true]}
  - kernel: attn_bwd
    dtypes: [f32, f16, bf16]
    knobs: {BQ_dq: 64, BK_dq: 32, WM_dq: 4, BQ_dkv: 32, BK_dkv: 32, WM_dkv: 2}
    dims: {B: 2, H: 4, Hkv: 2, Lq: 77, Lk: 90, D: [64, 96, 128]}
    flags: {causal: [false, true], alias: [false, true]}
  # The tensor-core dKV split (warps own key rows, double-buffered Q/dO)
  # with many warps, and the double-buffered dQ with several key tiles.
  - kernel: attn_bwd
    dtypes: [f16, bf16]
    knobs: {BQ_dq: 128, BK_dq: 64, WM_dq: 8, BQ_dkv: [16, 64], BK_dkv: 128, WM_dkv: 8}
    dims: {B: 1, H: 4, Hkv: 2, Lq: [200, 333], Lk: 301, D: [64, 128]}
    flags: {causal: [false, true]}
  - kernel: attn_bwd
    dtypes: [bf16]
    knobs: {BQ_dq: 16, BK_dq: 16, WM_dq: 1, BQ_dkv: 16, BK_dkv: 32, WM_dkv: 1}
    dims: {B: 1, H: 2, Hkv: 2, Lq: 50, Lk: 33, D: 256}
    flags: {causal: [false, true]}
  - kernel: attn_bwd
    dtypes: [f32]
    knobs: {BQ_dq: 16, BK_dq: 8, WM_dq: 2, BQ_dkv: 16, BK_dkv: 8, WM_dkv: 2}  # f32 only: 8 rows per warp
    dims: {B: 1, H: 4, Hkv: 1, Lq: 45, Lk: 61, D: 64}
    flags: {causal: [false, true], alias: [false, true]}
  - kernel: attn_bwd_unfused
    dtypes: [f32, f16, bf16]
    knobs: {BM: [32, 128], BN: [64, 128]}
    dims: {B: 2, H: 4, Hkv: 2, Lq: 77, Lk: 90, D: [64, 128]}
    flags: {causal: [false, true]}
YAML
"$mltop" --backend "$backend" --config "$cfg" --csv "$csv"
