#!/usr/bin/env bash
# mltop compare on a GPU: the same sweep run twice must read "same" for
# (nearly) every spec, and a copy of the kernel that does 5% more work
# (5% more blocks, each re-reading a row) must read "slower" with exit 1.
#   scripts/compare-gpu.sh BINARY   (CSVs and reports under $OUT, default /tmp/compare-gpu)
set -uo pipefail
bin=$(realpath "${1:?usage: scripts/compare-gpu.sh BINARY}")
out=${OUT:-/tmp/compare-gpu}
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r examples/row_sum "$work/base"
cp -r examples/row_sum "$work/slow"
sed -i 's/^    grid: \[rows\]/    grid: ["rows + rows \/ 20"]/' "$work/slow/kernel.yaml"
sed -i 's/int r = blockIdx.x;/int r = blockIdx.x % rows;/; s/if (threadIdx.x == 0) Y\[r\]/if (threadIdx.x == 0 \&\& blockIdx.x < rows) Y[r]/' "$work/slow/row_sum.cu"
grep -q 'rows / 20' "$work/slow/kernel.yaml" && grep -q 'blockIdx.x % rows' "$work/slow/row_sum.cu" || { echo "the slow copy did not take its edits"; exit 1; }
sweep() { # sweep DIR CSV
	cat >"$work/sweep.yaml" <<YAML
backend: cuda
sweeps:
  - kernel: $1/kernel.yaml
    dtypes: [f32, bf16]
    knobs: {WG: [256, 512, 1024]}
    dims: {rows: 1024, cols: [16384, 65536, 131072]}
YAML
	"$bin" --config "$work/sweep.yaml" --csv "$2" --quiet --yes >/dev/null 2>"$2.err"
}
sweep "$work/base" "$out/a.csv"
sweep "$work/base" "$out/b.csv"
sweep "$work/slow" "$out/slow.csv"
"$bin" compare "$out/a.csv" "$out/b.csv" >"$out/same.txt" 2>&1
echo "same sweep twice: exit $?" | tee "$out/summary.txt"
tail -n 6 "$out/same.txt" | tee -a "$out/summary.txt"
"$bin" compare "$out/a.csv" "$out/slow.csv" >"$out/slower.txt" 2>&1
echo "5% more work: exit $? (want 1)" | tee -a "$out/summary.txt"
cat "$out/slower.txt" | tee -a "$out/summary.txt"
