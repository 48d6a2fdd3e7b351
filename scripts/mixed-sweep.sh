# Sourced by scripts/multi-gpu.sh and scripts/cuda-repro-mixed.sh (bash):
# the mixed sweep both of them run — attn_fwd bf16/f16 at two lengths and
# head dims, causal both ways; softmax_bwd; rmsnorm_bwd.
#
# mixed_sweep_yaml FILE ATTN_KNOBS [TIME_LIMIT]: writes the sweep to FILE
# for $BACKEND (default cuda) with attn_fwd's knobs ATTN_KNOBS, lengths
# $LENS (default [1024, 4096]) and, when given, defaults.time_limit.
mixed_sweep_yaml() {
	local file=$1 knobs=$2 limit=${3:-}
	{
		echo "backend: ${BACKEND:-cuda}"
		[ -n "$limit" ] && printf 'defaults:\n  time_limit: %s\n' "$limit"
		cat <<YAML
sweeps:
  - kernel: attn_fwd
    dtypes: [bf16, f16]
    knobs: $knobs
    dims: {B: 1, H: 16, Hkv: 16, Lq: ${LENS:-[1024, 4096]}, Lk: ${LENS:-[1024, 4096]}, D: [64, 128]}
    flags: {causal: [false, true]}
    where: ["Lq == Lk", "BQ % (16*WM) == 0"]
  - kernel: softmax_bwd
    knobs: {WG: [64, 128, 256, 512]}
    dims: {rows: [4096, 16384], cols: [1024, 4096]}
  - kernel: rmsnorm_bwd
    dtypes: [bf16]
    knobs: {WG: [128, 256, 512], RPG: [4, 8, 16, 32]}
    dims: {rows: [8192, 32768], D: [2048, 4096]}
YAML
	} >"$file"
}

# MIXED_LARGE_KNOBS: the 448-spec sweep's attn_fwd knobs (SWEEP=mixed-large).
MIXED_LARGE_KNOBS='{BQ: [32, 64, 128], BK: [32, 64, 128], WM: [1, 2, 4], WN: 1}'
