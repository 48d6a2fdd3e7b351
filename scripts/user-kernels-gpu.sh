#!/usr/bin/env bash
# User kernels on an NVIDIA GPU (issue 11): each example runs, verifies and
# sweeps; broken copies fail the way they should; a faulting kernel is
# `crashed`/`error` and the sweep goes on; the softmax checked against the
# naive one-thread-per-row kernel (check: kernel); a sweep file naming
# kernels by paths relative to itself. Prints a summary table; logs,
# JSON and CSV go under $OUT (default /tmp/user-kernels-gpu).
#   scripts/user-kernels-gpu.sh BINARY
# Run from the repository root (it reads examples/). Needs python3 with
# NumPy for the Python references (and to read the JSON results).
set -uo pipefail
shopt -s extglob
bin=$(realpath "${1:?usage: scripts/user-kernels-gpu.sh BINARY}")
out=${OUT:-/tmp/user-kernels-gpu}
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fast=(--backend cuda --time-limit 1 --min-time 0.05 --warmup 0.02 --quiet)
rows=()
pass=0
fail=0

# row NAME EXPECTED GOT DETAIL: one line of the summary
row() {
	local ok=FAIL
	if [[ "$3" == $2 ]]; then ok=PASS; pass=$((pass + 1)); else fail=$((fail + 1)); fi
	rows+=("$(printf '%-42s %-22s %-14s %-4s %s' "$1" "$2" "$3" "$ok" "$4")")
}

# field FILE EXPR: a field of the first JSON line of FILE
field() {
	python3 - "$1" "$2" <<'PY' 2>/dev/null || echo "?"
import json, sys
try:
    line = open(sys.argv[1]).readline()
    r = json.loads(line)
except Exception:
    print("no-json"); sys.exit(0)
v = eval(sys.argv[2], {}, {"r": r})
print(v if v is not None else "")
PY
}

# runone NAME EXPECTED_STATUS ARGS...: mltop run with --json
runone() {
	local name=$1 want=$2
	shift 2
	"$bin" run "$@" "${fast[@]}" --json >"$out/$name.json" 2>"$out/$name.err"
	local rc=$?
	local st med err
	st=$(field "$out/$name.json" 'r["status"]')
	med=$(field "$out/$name.json" '"%.1f us %.0f GB/s %.2f TFLOP/s maxerr %s" % (r["stats"]["median_ns"]/1e3, r["gbps"], r["tflops"], (r.get("verdict") or {}).get("max_abs_err"))')
	err=$(field "$out/$name.json" '(r.get("error") or "")[:160].replace("\n", " | ")')
	row "$name" "$want" "$st" "rc=$rc $med ${err}"
}

echo "== device" | tee "$out/summary.txt"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | tee -a "$out/summary.txt"
"$bin" list --kernel examples >"$out/list.txt" 2>&1
row "list --kernel examples" "0" "$?" "$(grep -c '^  user_' "$out/list.txt") user kernels listed"

# 1. each example, f32 and bf16 (and f16 for softmax)
runone softmax-f32 ok examples/softmax/kernel.yaml --dtype f32
runone softmax-bf16-WG512 ok examples/softmax/kernel.yaml --dtype bf16 --set WG=512
runone softmax-f16-ragged ok examples/softmax/kernel.yaml --dtype f16 --set rows=333,cols=1001,WG=128
runone matmul-f32 ok examples/matmul/kernel.yaml --dtype f32
runone matmul-bf16-128x128 ok examples/matmul/kernel.yaml --dtype bf16 --set BM=128,BN=128,BK=16,WG=256
runone matmul-f16-ragged ok examples/matmul/kernel.yaml --dtype f16 --set M=1000,N=777,K=333
runone transpose-f32 ok examples/transpose/kernel.yaml --dtype f32
runone transpose-bf16-ragged ok examples/transpose/kernel.yaml --dtype bf16 --set height=4097,width=3001,TILE=64,ROWS=8

# 2. a small sweep of all three to CSV (through the worker, as always on CUDA)
cat >"$work/sweep.yaml" <<'YAML'
backend: cuda
defaults: {time_limit: 0.5, min_time: 0.05, warmup: 0.02}
sweeps:
  - kernel: user_softmax
    dtypes: [f32, bf16]
    knobs: {WG: [128, 256, 1024]}
    dims: {rows: 4096, cols: [1000, 4096]}
  - kernel: user_matmul
    dtypes: [f32, bf16]
    knobs: {BM: [64, 128], BN: [64, 128], BK: [16, 32], WG: 256}
    dims: {M: 1024, N: 1024, K: 1024}
  - kernel: user_transpose
    dtypes: [f16]
    knobs: {TILE: [16, 32, 64], ROWS: [4, 8]}
    dims: {height: 4097, width: 3001}
YAML
"$bin" --config "$work/sweep.yaml" --kernel examples --csv "$out/sweep.csv" --quiet >"$out/sweep.txt" 2>"$out/sweep.err"
src=$?
st=$(python3 -c "import csv,collections,sys; print(dict(collections.Counter(r['status'] for r in csv.DictReader(open(sys.argv[1])))))" "$out/sweep.csv" 2>&1)
row "sweep examples -> CSV" "0" "$src" "$st"

# 3. a deliberately broken copy: a 1% error in every output
cp -r examples/softmax "$work/broken"
sed -i 's/\* inv);/* inv * 1.01f);/' "$work/broken/softmax.cu"
sed -i 's/^name: user_softmax/name: user_softmax_broken/' "$work/broken/kernel.yaml"
runone broken-softmax mismatch "$work/broken/kernel.yaml" --dtype f32

# 4. a syntax error: the log must name the user's file and line (30)
cp -r examples/softmax "$work/syntax"
sed -i '30s/^/    this is not C++;\n/' "$work/syntax/softmax.cu"
sed -i 's/^name: user_softmax/name: user_softmax_syntax/' "$work/syntax/kernel.yaml"
runone syntax-error compile_error "$work/syntax/kernel.yaml" --dtype f32
if grep -q "syntax/softmax.cu:30: error" "$out/syntax-error.json"; then
	row "syntax error names softmax.cu:30" "yes" "yes" ""
else
	row "syntax error names softmax.cu:30" "yes" "no" "$(grep -o 'softmax.cu[:(][0-9]*' "$out/syntax-error.json" | head -1)"
fi

# 5. an entry without extern "C" (a C++ name): found through NVRTC's name expressions
cp -r examples/softmax "$work/mangled"
sed -i 's/^extern "C" __global__/__global__/' "$work/mangled/softmax.cu"
sed -i 's/^name: user_softmax/name: user_softmax_mangled/' "$work/mangled/kernel.yaml"
runone entry-cxx-name ok "$work/mangled/kernel.yaml" --dtype f32

# 6. a reference returning the wrong shape
cp -r examples/softmax "$work/badref"
sed -i 's|return {"Y": e / e.sum(axis=1, keepdims=True)}|return {"Y": (e / e.sum(axis=1, keepdims=True))[:, 1:]}|' "$work/badref/ref.py"
sed -i 's/^name: user_softmax/name: user_softmax_badref/' "$work/badref/kernel.yaml"
runone ref-wrong-shape error "$work/badref/kernel.yaml" --dtype f32 --set rows=64,cols=256

# 7. check: none -> unchecked (exit 0)
cp -r examples/softmax "$work/nocheck"
sed -i 's/^check: .*/check: none/; s/^name: user_softmax/name: user_softmax_nocheck/' "$work/nocheck/kernel.yaml"
runone unchecked unchecked "$work/nocheck/kernel.yaml" --dtype f32

# 8. a faulting kernel in a sweep: crashed (or error), and the next spec runs
cp -r examples/softmax "$work/fault"
sed -i 's/^name: user_softmax/name: user_softmax_fault/' "$work/fault/kernel.yaml"
sed -i 's/^knobs:/flags:\n  FAULT: {default: false}\nknobs:/' "$work/fault/kernel.yaml"
sed -i 's|^    const float inv = 1.0f / s;|    const float inv = 1.0f / s;\n#if FAULT\n    if (row == 7) y = (T*)((size_t)1 << 47);\n#endif|' "$work/fault/softmax.cu"
cat >"$work/fault.yaml" <<'YAML'
backend: cuda
defaults: {time_limit: 0.3, min_time: 0.02, warmup: 0.01}
sweeps:
  - kernel: user_softmax_fault
    dtypes: [f32]
    flags: {FAULT: [true, false]}
    dims: {rows: 256, cols: 1024}
YAML
"$bin" --config "$work/fault.yaml" --kernel "$work/fault" --csv "$out/fault.csv" --quiet >"$out/fault.txt" 2>"$out/fault.err"
frc=$?
fst=$(python3 -c "import csv,sys; print(' '.join(r['status'] for r in csv.DictReader(open(sys.argv[1]))))" "$out/fault.csv" 2>&1)
row "faulting kernel, then a good one" "@(crashed|error) ok" "$fst" "rc=$frc"

# 9. engine time from the command to a result for softmax (compile cache cold)
rm -rf "${XDG_CACHE_HOME:-$HOME/.cache}/mltop/cubin" 2>/dev/null
t0=$(date +%s.%N)
"$bin" run examples/softmax/kernel.yaml --dtype bf16 --set WG=256,rows=4096,cols=4096 "${fast[@]}" --json >"$out/reload-time.json" 2>&1
t1=$(date +%s.%N)
row "softmax cold compile+verify+time" "ok" "$(field "$out/reload-time.json" 'r["status"]')" "$(python3 -c "print('%.2f s wall' % ($t1 - $t0))")"

# 10. the naive softmax, checked by the softmax's Python reference
runone softmax-naive-f32 ok examples/softmax_naive/kernel.yaml --dtype f32 --set rows=4096,cols=1024
runone softmax-naive-bf16-ragged ok examples/softmax_naive/kernel.yaml --dtype bf16 --set rows=1000,cols=333,WG=64

# 11. check: kernel: the softmax against the naive kernel run at f32 on the
# same inputs (a copy of examples/, so that ../softmax_naive resolves)
cp -r examples "$work/ex"
sed -i 's|^check: {python: ref.py}|check: {kernel: ../softmax_naive/kernel.yaml}|; s/^name: user_softmax$/name: user_softmax_vsnaive/' "$work/ex/softmax/kernel.yaml"
runone vsnaive-bf16-WG512 ok "$work/ex/softmax/kernel.yaml" --dtype bf16 --set WG=512
runone vsnaive-f16-ragged ok "$work/ex/softmax/kernel.yaml" --dtype f16 --set rows=333,cols=1001,WG=128
rowsdesc=$(field "$out/vsnaive-bf16-WG512.json" '(r.get("verdict") or {}).get("rows")')
row "vsnaive verdict names the naive kernel" "*against user_softmax_naive at f32*" "$rowsdesc" ""
cp -r "$work/ex/softmax" "$work/ex/softmax_broken"
sed -i 's/\* inv);/* inv * 1.01f);/' "$work/ex/softmax_broken/softmax.cu"
sed -i 's/^name: user_softmax_vsnaive/name: user_softmax_vsnaive_broken/' "$work/ex/softmax_broken/kernel.yaml"
runone vsnaive-broken mismatch "$work/ex/softmax_broken/kernel.yaml" --dtype f32

# 12. a sweep file naming kernels by paths relative to itself (a manifest
# and a folder), no --kernel: the workers get them as --kernel arguments;
# where: in the manifests' language (cdiv, sizeof(T)). 8 + 2 specs.
cat >"$work/rel.yaml" <<'YAML'
backend: cuda
defaults: {time_limit: 0.3, min_time: 0.02, warmup: 0.01}
sweeps:
  - kernel: ex/softmax/kernel.yaml
    dtypes: [f32, bf16]
    knobs: {WG: [128, 256, 1024]}
    dims: {rows: 2048, cols: [1000, 4096]}
    where: ["cdiv(cols, WG) <= 8 && sizeof(T) * cols <= 16384"]
  - kernel: ./ex/softmax_naive
    dtypes: [f32]
    knobs: {WG: [64, 128]}
    dims: {rows: 2048, cols: 1024}
YAML
(cd / && "$bin" --config "$work/rel.yaml" --csv "$out/rel.csv" --quiet >"$out/rel.txt" 2>"$out/rel.err")
rrc=$?
rst=$(python3 -c "import csv,collections,sys; print(dict(collections.Counter(r['status'] for r in csv.DictReader(open(sys.argv[1])))))" "$out/rel.csv" 2>&1)
row "sweep with relative kernel: paths" "0 {'ok': 10}" "$rrc $rst" ""
printf 'sweeps:\n  - kernel: ./ex/nope/kernel.yaml\n' >"$work/rel-bad.yaml"
"$bin" --config "$work/rel-bad.yaml" --backend cuda >/dev/null 2>"$out/rel-bad.err"
brc=$?
row "sweep with a missing kernel path" "2 yes" "$brc $(grep -q 'rel-bad.yaml:2:13: sweeps\[0\].kernel: cannot load the user kernel' "$out/rel-bad.err" && echo yes || echo no)" "$(head -c 160 "$out/rel-bad.err")"

# 13. the Go benchmark format keeps unchecked rows' numbers
"$bin" run "$work/nocheck/kernel.yaml" --dtype f32 "${fast[@]}" --bench >"$out/bench-unchecked.txt" 2>&1
row "--bench prints unchecked rows" "@([1-9]|10)" "$(grep -c '^BenchmarkUser_softmax_nocheck' "$out/bench-unchecked.txt")" ""

# 15. the same CUB row sum including <cub/cub.cuh> (all of CUB), as most code
# does: mltop serves CUB's device-side headers for it under NVRTC
cp -r examples/coop_groups "$work/cubfull"
sed -i 's|#include <cub/block/block_reduce.cuh>|#include <cub/cub.cuh>|' "$work/cubfull/rowsum.cu"
sed -i 's/^name: coop_groups_row_sum_cub/name: cubfull_row_sum/' "$work/cubfull/cub/kernel.yaml"
grep -q '<cub/cub.cuh>' "$work/cubfull/rowsum.cu" && runone cub-full-header ok "$work/cubfull/cub/kernel.yaml" --dtype f32

# 14. every example written the way public code bases write kernels, in each
# of its dtypes: ok; its broken twin (a path with "broken"): mismatch
while IFS= read -r m; do
	grep -q 'cuda:' "$m" || continue # Metal-only (MSL emulation tests cover them)
	want=ok
	[[ "$m" == *broken* ]] && want=mismatch
	dts=$(sed -n 's/^dtypes: *\[\(.*\)\]/\1/p' "$m" | tr -d ' ' | tr ',' ' ')
	for dt in ${dts:-f32}; do
		name=$(echo "${m#examples/}" | sed 's|/kernel.yaml||; s|/|-|g')-$dt
		runone "$name" "$want" "$m" --dtype "$dt"
	done
done < <(find examples -name kernel.yaml -not -path 'examples/cluster/*' | sort | grep -v -E '^examples/(softmax|softmax_naive|matmul|transpose)/kernel.yaml$')

{
	echo
	printf '%-42s %-22s %-14s %-4s %s\n' CHECK EXPECTED GOT OK DETAIL
	printf '%s\n' "${rows[@]}"
	echo
	echo "$pass passed, $fail failed; logs in $out"
} | tee -a "$out/summary.txt"
[[ $fail -eq 0 ]]
