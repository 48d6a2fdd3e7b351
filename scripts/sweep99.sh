# Sourced by scripts/cuda-sweep-rate.sh and scripts/cuda-repro.sh (bash):
# the sweep both of them time, 99 attn_fwd bf16 configs at B=1 H=32
# L=2048 D=128 (every BQ/WM/BK/WN tile valid on CUDA with BQ >= 32:
# kernels of ~0.25-3 ms), so that their figures are of the same sweep.
# Their Python halves match its rows with scripts/sweep_agreement.py.

# sweep99_setup LOG: writes LOG/sweep99.yaml and points MLTOP_CUDA_CACHE at
# an empty LOG/compile-cache (the first sweep then compiles everything).
sweep99_setup() {
	local log=$1
	mkdir -p "$log"
	cat >"$log/sweep99.yaml" <<'YAML'
backend: cuda
sweeps:
  - kernel: attn_fwd
    dtypes: [bf16]
    knobs: {BQ: [32, 64, 128], WM: [1, 2, 4, 8], BK: [16, 32, 64, 128], WN: [1, 2, 4]}
    dims: {B: 1, H: 32, Hkv: 32, Lq: 2048, Lk: 2048, D: 128}
    where: ["BQ % (16 * WM) == 0", "BK % (8 * WN) == 0"]
YAML
	export MLTOP_CUDA_CACHE=$log/compile-cache
	rm -rf "$MLTOP_CUDA_CACHE"
}
