#!/usr/bin/env bash
# Run-to-run agreement at the defaults on the 448-spec mixed sweep
# (scripts/multi-gpu.sh's SWEEP=mixed-large: attn_fwd bf16/f16 at two
# lengths and head dims, causal both ways, softmax_bwd, rmsnorm_bwd),
# one GPU: a run that fills the compile cache, then RUNS more (default 3),
# each a process of its own, compared pairwise: the share of rows within
# 1 % and 2 %, by family, and the rows that moved most.
#
# Usage: scripts/cuda-repro-mixed.sh [BINARY]   (default .gpu/mltop)
# Logs under $OUT (or /tmp/mltop-repro-mixed). About 45 s a run on an H200.
# Extra environment is passed to mltop (MLTOP_CUDA_ALLOC_GRANULE=0 shows
# the sweep without buffers rounded to 2 MiB).
set -uo pipefail
M=${1:-.gpu/mltop}
LOG=${OUT:-/tmp/mltop-repro-mixed}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$LOG"
export MLTOP_CUDA_CACHE="$LOG/cubin-cache"
. "$HERE/mixed-sweep.sh"
mixed_sweep_yaml "$LOG/sweep.yaml" "$MIXED_LARGE_KNOBS"
for r in $(seq 0 "${RUNS:-3}"); do
	s=$(date +%s)
	"$M" --config "$LOG/sweep.yaml" --json --quiet >"$LOG/r$r.jsonl" 2>"$LOG/r$r.err"
	echo "run $r: exit $?, $(($(date +%s) - s)) s; $(tail -1 "$LOG/r$r.err")"
done
python3 - "$LOG" "$HERE" "${RUNS:-3}" <<'PY'
import collections, itertools, json, sys
sys.path.insert(0, sys.argv[2])
import sweep_agreement
log, runs = sys.argv[1], int(sys.argv[3])
R = [[json.loads(l) for l in open(f"{log}/r{i}.jsonl") if l.startswith("{")] for i in range(1, runs + 1)]
fam, moved = collections.defaultdict(list), collections.Counter()
for a, b in itertools.combinations(range(runs), 2):
    ps = sweep_agreement.pairs(R[a], R[b])
    d = [abs(y / x - 1) for _, _, x, y in ps]
    print(f"runs {a + 1}-{b + 1}: {len(d)} rows, within 1 %: {100 * sum(v <= 0.01 for v in d) / len(d):.1f} %, within 2 %: {100 * sum(v <= 0.02 for v in d) / len(d):.1f} %")
    keyed = {sweep_agreement.key(r): r for r in R[a] if r.get("status") == "ok"}
    for r in R[b]:
        k = sweep_agreement.key(r)
        if r.get("status") == "ok" and k in keyed:
            v = abs(r["stats"]["median_ns"] / keyed[k]["stats"]["median_ns"] - 1)
            fam[r["spec"]["kernel"]].append(v)
            moved[k] = max(moved[k], v)
for f, d in fam.items():
    print(f"  {f}: within 1 % {100 * sum(v <= 0.01 for v in d) / len(d):.0f} % of {len(d)} pairs, worst {100 * max(d):.1f} %")
for k, v in moved.most_common(5):
    print(f"  moved {100 * v:.1f} %: {k[:120]}")
PY
