#!/usr/bin/env bash
# Sweeps over several GPUs: a sweep on one GPU, then on N GPUs with
# --devices all --phases, then as N shards side by side (2 on one GPU) merged with `mltop merge`.
# Compares the rows (same specs and statuses, medians within noise), the
# wall time (target for N GPUs: at most 1.1/N of the one-GPU time, compile
# excluded: a first run fills the compile cache, the timed runs find it
# warm), and prints where each device's time went (start-up, GPU busy,
# host, idle at the end) and the GPUs' busy share of the N-GPU sweep.
# With N=1 the --devices run is trivially the one-GPU run, and the mechanics
# are exercised with two workers on the one GPU (MLTOP_DEVICES_REPEAT=1;
# their timings disturb each other, so only the rows are compared there).
#
#   scripts/multi-gpu.sh BINARY [N]      N: GPUs to use (default: all found)
#
# SWEEP=attn (default): 100 attn_fwd configs of one shape (many knobs, one
#   shape: the host work is shared by every spec).
# SWEEP=mixed: 160 specs: attn_fwd bf16/f16 at D 64 and 128, L 1024 and
#   4096, causal both ways, plus softmax_bwd and rmsnorm_bwd (many shapes: inputs and references are
#   made once per host and shared by the workers; the dearest shapes run
#   first).
# SWEEP=mixed-large: the same with BQ and BK 32/64/128 and WM 1/2/4: 448
#   specs (352 run, 96 invalid), about 30 s on one H200: each GPU's
#   start-up weighs less than in the 8 s of SWEEP=mixed.
# Without a GPU, the same steps run on the CPU backend (a check of the
# script; CPU timings say nothing about GPUs):
#   BACKEND=cpu MLTOP_FAKE_DEVICES=2 SWEEP=mixed LENS='[32, 64]' TIME_LIMIT=0.02 scripts/multi-gpu.sh ./mltop 2
# It takes several minutes on 2 cores: LENS shrinks only attn_fwd, and the
# softmax_bwd and rmsnorm_bwd shapes are large for a CPU. Its summary's
# "exits:" line shows 2 for cold, one and multi, as on a GPU: 8 rmsnorm_bwd
# specs break the family's register rule on every backend and become
# invalid rows. DIMS='{B: 1, …}' sets the default attn sweep's shape.
# Logs and CSVs go to $OUT (default /tmp/mltop-multi-gpu). The summary is
# printed last.
set -uo pipefail
B=${1:?usage: scripts/multi-gpu.sh BINARY [N]}
B=$(realpath "$B")
N=${2:-$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')}
[ "${N:-0}" -ge 1 ] || { echo "no GPU found (nvidia-smi -L); give N" >&2; exit 2; }
O=${OUT:-/tmp/mltop-multi-gpu}
mkdir -p "$O"
rm -f "$O"/*.csv
export MLTOP_CUDA_CACHE="$O/cubin-cache"
rm -rf "$MLTOP_CUDA_CACHE"
DEVS=$(seq -s, 0 $((N - 1)))

. "$(dirname "$0")/mixed-sweep.sh"
ATTN_KNOBS='{BQ: [32, 64], BK: [32, 64], WM: [2, 4], WN: 1}'
[ "${SWEEP:-attn}" = mixed-large ] && ATTN_KNOBS=$MIXED_LARGE_KNOBS
if [ "${SWEEP:-attn}" = mixed ] || [ "${SWEEP:-attn}" = mixed-large ]; then
	mixed_sweep_yaml "$O/sweep.yaml" "$ATTN_KNOBS" "${TIME_LIMIT:-0.3}"
else
	cat >"$O/sweep.yaml" <<YAML
backend: ${BACKEND:-cuda}
defaults:
  time_limit: ${TIME_LIMIT:-0.3}
sweeps:
  - kernel: attn_fwd
    dtypes: [bf16]
    knobs: {BQ: [16, 32, 64, 128], BK: [8, 16, 32, 64, 128], WM: [1, 2, 4, 8], WN: 1}
    dims: ${DIMS:-{B: 1, H: 32, Hkv: 32, Lq: 2048, Lk: 2048, D: 64\}}
    flags: {causal: [false, true]}
    where: ["BQ % (16*WM) == 0"]
YAML
fi

secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

# timed NAME ARGS…: runs mltop, logs to $O/NAME.err, records the seconds.
timed() {
	local name=$1
	shift
	local t0 t1
	t0=$(date +%s.%N)
	"$@" >"$O/$name.out" 2>"$O/$name.err"
	local rc=$?
	t1=$(date +%s.%N)
	echo "$name $rc $(secs "$t0" "$t1")" >>"$O/times"
	echo "== $name: exit $rc, $(secs "$t0" "$t1") s" >&2
	grep -v '^mltop: phases [^d0-9]' "$O/$name.err" | tail -4 >&2
}
: >"$O/times"

# 1. compile cache fill (not compared; COLD_ALL=1: on every GPU, sooner),
# 2. one GPU, warm cache
cold_devs=()
[ "${COLD_ALL:-0}" = 1 ] && cold_devs=(--devices "$DEVS")
timed cold "$B" --config "$O/sweep.yaml" ${cold_devs[@]+"${cold_devs[@]}"} --csv "$O/cold.csv" --quiet
timed one "$B" --config "$O/sweep.yaml" --csv "$O/one.csv" --quiet --phases --json
# 3. N GPUs
timed multi "$B" --config "$O/sweep.yaml" --devices "$DEVS" --csv "$O/multi.csv" --quiet --phases --json
# 4. N=1: two workers on the one GPU (mechanics only)
if [ "$N" -eq 1 ]; then
	timed two-workers env MLTOP_DEVICES_REPEAT=1 "$B" --config "$O/sweep.yaml" --devices 0,0 --csv "$O/two-workers.csv" --quiet
fi
# 5. shards: N side by side on GPUs 0..N-1 when there are N >= 2 GPUs, else
# two one after the other on the one GPU
K=$(( N >= 2 ? N : 2 ))
t0=$(date +%s.%N)
# shard I on GPU G (CLAIMS=1: with --claims $O/claims): its own wall time
# goes to $O/shardI.time
rm -rf "$O/claims"
claims=()
[ "${CLAIMS:-0}" = 1 ] && claims=(--claims "$O/claims")
shard() {
	local t0 t1
	t0=$(date +%s.%N)
	MLTOP_TRACE_STARTUP=1 CUDA_VISIBLE_DEVICES=$2 "$B" --config "$O/sweep.yaml" --shard "$1/$K" ${claims[@]+"${claims[@]}"} --csv "$O/shard$1.csv" --quiet --phases --json >"$O/shard$1.out" 2>"$O/shard$1.err"
	t1=$(date +%s.%N)
	secs "$t0" "$t1" >"$O/shard$1.time"
}
if [ "$N" -ge 2 ]; then
	for i in $(seq 0 $((K - 1))); do shard "$i" "$i" & done
	wait
else
	shard 0 0
	shard 1 0
fi
t1=$(date +%s.%N)
echo "shards 0 $(secs "$t0" "$t1")" >>"$O/times"
for i in $(seq 0 $((K - 1))); do head -1 "$O/shard$i.err" >&2; done
"$B" merge $(seq -f "$O/shard%g.csv" 0 $((K - 1))) -o "$O/merged.csv" --config "$O/sweep.yaml" 2>"$O/merge.err"
echo "merge $? 0" >>"$O/times"
cat "$O/merge.err" >&2

python3 - "$O" "$N" "$K" <<'PY'
import csv, os, statistics, sys
o, n, k = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
times = {}
for line in open(os.path.join(o, "times")):
    name, rc, secs = line.split()
    times[name] = (int(rc), float(secs))
def load(name):
    p = os.path.join(o, name + ".csv")
    if not os.path.exists(p):
        return None
    rd = csv.DictReader(open(p))
    cols = rd.fieldnames
    # a spec is its columns from kernel up to n (dtype, knobs, dims, flags)
    spec = cols[cols.index("kernel"):cols.index("n")]
    return {tuple(r[k] for k in spec): r for r in rd}
one = load("one")
lines, ok = [], True
def compare(name, timing):
    global ok
    rows = load(name)
    if rows is None or one is None:
        lines.append(f"{name}: no CSV"); ok = False; return
    same_specs = set(rows) == set(one)
    same_status = all(rows[k]["status"] == one[k]["status"] for k in set(rows) & set(one))
    devs = sorted({r.get("device_ordinal", "?") for r in rows.values()})
    rel = [abs(float(rows[k]["median_us"]) / float(one[k]["median_us"]) - 1)
           for k in set(rows) & set(one) if rows[k]["status"] == "ok" and one[k]["status"] == "ok" and float(one[k]["median_us"]) > 0]
    med = statistics.median(rel) if rel else float("nan")
    far = sum(1 for r in rel if r > 0.10)
    verdict = same_specs and same_status and (not timing or far <= max(2, len(rel) // 20))
    ok = ok and same_specs and same_status
    lines.append(f"{name}: {len(rows)} rows (one GPU {len(one)}), same specs {same_specs}, same statuses {same_status}, "
                 f"devices {','.join(devs)}, median |Δmedian| {100*med:.1f}%, {far} beyond 10%"
                 + ("" if timing else " (two workers share one GPU: timings not compared)")
                 + ("  OK" if verdict else "  CHECK"))
compare("multi", True)
if n == 1:
    compare("two-workers", False)
compare("merged", True)
t1, tn = times["one"][1], times["multi"][1]
target = 1.1 / n
lines.append(f"wall: cold {times['cold'][1]:.1f} s (compile), one GPU {t1:.1f} s, {n} GPU(s) {tn:.1f} s = {tn/t1:.3f} of one GPU "
             f"(target <= {target:.3f}) {'OK' if tn/t1 <= target else 'SLOWER THAN TARGET'}")
# where each device's time went (--phases on the N-GPU run)
for l in open(os.path.join(o, "multi.err")):
    if l.startswith("mltop: phases device ") or (l.startswith("mltop: phases ") and " devices in " in l):
        lines.append(l.strip()[len("mltop: phases "):])
lines.append(f"shards: {k} shards in {times['shards'][1]:.1f} s = {times['shards'][1]/t1:.3f} of one GPU ({f'side by side on {k} GPUs' if n >= 2 else 'one after the other on 1 GPU'}); merge exit {times['merge'][0]} (0: every spec has a row)")
for i in range(k):
    try:
        own = float(open(os.path.join(o, f"shard{i}.time")).read())
    except (OSError, ValueError):
        continue
    phases = [l.strip()[len("mltop: phases "):] for l in open(os.path.join(o, f"shard{i}.err")) if l.startswith("mltop: phases 1 device in ")]
    claims = [l.strip().split("; ", 1)[1] for l in open(os.path.join(o, f"shard{i}.err")) if l.rstrip().endswith("(--claims)")]
    lines.append(f"  shard {i}: {own:.2f} s" + (f"; {phases[0]}" if phases else "") + (f"; {claims[0]}" if claims else ""))
lines.append("exits: " + ", ".join(f"{k} {v[0]}" for k, v in times.items()))
ok = ok and times["merge"][0] == 0
print("MULTI-GPU SUMMARY (N=%d)" % n)
print("\n".join("  " + l for l in lines))
print("RESULT:", "rows agree" if ok else "ROWS DIFFER (see above and %s)" % o)
PY
# where the time of each spec went, one GPU against N (ms per spec, summed
# over the specs of each run)
python3 "$(dirname "$0")/phases-summary.py" one "$O/one.out" multi "$O/multi.out" $(for i in $(seq 0 $((K - 1))); do echo "shard$i $O/shard$i.out"; done)
