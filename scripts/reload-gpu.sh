#!/usr/bin/env bash
# Live reload on an NVIDIA GPU (issue 11, "time from save to the new result"):
# `mltop watch` on a copy of examples/softmax, through the worker subprocess
# as in the TUI, while this script saves the source and the manifest. Each
# run prints one line with after_save= (seconds from the file's mtime to the
# result: reload, NVRTC compile, the Python reference of the new version,
# measurement). Checks: a comment edit reruns ok, a syntax error is
# compile_error at softmax.cu:LINE (the user's line), the fix reruns ok, a
# manifest edit reruns ok. Logs under $OUT (default /tmp/reload-gpu).
#   scripts/reload-gpu.sh BINARY
# Run from the repository root. Needs python3 with NumPy (ref.py).
set -uo pipefail
bin=$(realpath "${1:?usage: scripts/reload-gpu.sh BINARY}")
out=${OUT:-/tmp/reload-gpu}
mkdir -p "$out"
work=$(mktemp -d)
pid=
trap '[[ -n $pid ]] && kill "$pid" 2>/dev/null; rm -rf "$work"' EXIT
cp -r examples/softmax "$work/softmax"
k=$work/softmax
log=$out/watch.log
: >"$log"
"$bin" watch "$k" --backend cuda --set WG=256,rows=4096,cols=4096 --dtype f32 \
	--time-limit 1 --min-time 0.05 --warmup 0.02 --count 4 >"$log" 2>"$out/watch.err" &
pid=$!

# wait_lines N: until the log holds N lines (or 180 s, or watch exited)
wait_lines() {
	for _ in $(seq 1 1800); do
		(($(wc -l <"$log") >= $1)) && return 0
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	(($(wc -l <"$log") >= $1))
}
line() { sed -n "${1}p" "$log"; }
pass=0
fail=0
rows=()
check() { # NAME LINE PATTERN
	local l ok=FAIL
	l=$(line "$2")
	if [[ "$l" == *$3* ]]; then ok=PASS; pass=$((pass + 1)); else fail=$((fail + 1)); fi
	rows+=("$(printf '%-28s %-4s %s' "$1" "$ok" "$(grep -o 'after_[a-z]*=[0-9.]*s' <<<"$l")")")
}

wait_lines 1 || { echo "no first result; see $out/watch.err"; cat "$out/watch.err"; exit 1; }
check "first run (start)" 1 "  ok  "
sleep 1.1 # a new mtime second on coarse file systems
echo "// edited $(date +%s.%N)" >>"$k/softmax.cu"
wait_lines 2
check "comment edit -> rerun" 2 "softmax.cu saved  ok  "
cp "$k/softmax.cu" "$work/good.cu"
n=$(($(wc -l <"$k/softmax.cu") + 1))
echo "int broken = ;" >>"$k/softmax.cu"
sleep 0.3
wait_lines 3
check "syntax error -> file:line" 3 "compile_error  at softmax.cu:$n"
cp "$work/good.cu" "$k/softmax.cu"
wait_lines 4
check "fixed -> rerun" 4 "softmax.cu saved  ok  "
sed -i 's/^description: /description: (edited) /' "$k/kernel.yaml"
wait_lines 5
check "manifest edit -> rerun" 5 "kernel.yaml saved  ok  "
for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done # --count 4: it exits

cat "$log"
echo
printf '%-28s %-4s %s\n' check ok "time"
printf '%s\n' "${rows[@]}"
echo "reload-gpu: $pass passed, $fail failed; log in $log"
((fail == 0))
