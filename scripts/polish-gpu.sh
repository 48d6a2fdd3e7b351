#!/usr/bin/env bash
# Issue 13 (polish) checks on an NVIDIA GPU:
#  1. the memory check refuses nothing that fits: a 23 GiB softmax_bwd spec
#     (3 × 7.6 GiB f32 buffers; ~31 GiB of host copies) runs and verifies;
#  2. the table is whole when piped, and the sweep announces its count;
#  3. a bad --set is refused with exit 2 before the GPU is touched.
#   scripts/polish-gpu.sh MLTOP     (logs under $OUT when set)
set -uo pipefail
mltop=${1:-./mltop}
out=${OUT:-$(mktemp -d)}
fail=0
check() { # name, want-exit, grep-pattern, command...
	local name=$1 want=$2 pat=$3; shift 3
	"$@" >"$out/$name.out" 2>"$out/$name.err"
	local rc=$?
	if [[ $rc -ne $want ]] || ! grep -q -- "$pat" "$out/$name.out" "$out/$name.err"; then
		echo "FAIL $name: exit $rc (want $want), pattern '$pat'"; tail -5 "$out/$name.err"; fail=1
	else
		echo "ok   $name"
	fi
}
check big-spec-fits 0 "status     ok" "$mltop" run softmax_bwd --backend cuda --set rows=1000000,cols=2048 --time-limit 1 --min-time 0.05
check big-spec-bf16 0 "status     ok" "$mltop" run softmax_bwd --backend cuda --dtype bf16 --set rows=1000000,cols=2048 --time-limit 1 --min-time 0.05
cfg=$(mktemp --suffix=.yaml)
trap 'rm -f "$cfg"' EXIT
cat >"$cfg" <<'YAML'
defaults: {time_limit: 0.2, min_time: 0.01, warmup: 0.01}
sweeps:
  - kernel: attn_fwd
    dtypes: [bf16]
    knobs: {BQ: 64, BK: 32, WM: 4, WN: 1}
    dims: {B: 1, H: 8, Hkv: 8, Lq: [128, 256, 512], Lk: 512, D: 128}
YAML
check sweep-announce 0 "3 specs to run from" "$mltop" --backend cuda --config "$cfg"
check sweep-piped-whole 0 "Lq=512 Lk=512 D=128" "$mltop" --backend cuda --config "$cfg"
check set-twice 2 "gives BQ twice" "$mltop" run attn_fwd --backend cuda --set BQ=32,BQ=64
echo "polish-gpu: $([[ $fail -eq 0 ]] && echo all ok || echo FAILURES) (logs in $out)"
exit $fail
