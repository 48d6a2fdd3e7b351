#!/usr/bin/env bash
# Runs every manifest given (files, or folders searched for *.yaml) once per
# dtype it lists and prints a table: status, median, worst |Δ|/bound, error.
# For kernels taken unchanged from other code bases, with a manifest beside
# them: expected status is "ok" unless the manifest's path has "broken".
#   scripts/run-manifests.sh BINARY PATH... (logs under $OUT, default /tmp/manifests)
set -uo pipefail
bin=$(realpath "${1:?usage: scripts/run-manifests.sh BINARY PATH...}")
shift
out=${OUT:-/tmp/manifests}
mkdir -p "$out"
fast=(--time-limit 1 --min-time 0.05 --warmup 0.02 --quiet)
pass=0
fail=0
printf '%-44s %-6s %-10s %-10s %-9s %s\n' MANIFEST DTYPE STATUS MEDIAN_US ERR/BOUND DETAIL | tee "$out/summary.txt"
for p in "$@"; do
	if [[ -d "$p" ]]; then find "$p" -name '*.yaml' | sort; else echo "$p"; fi
done | while IFS= read -r m; do
	want=ok
	[[ "$m" == *broken* ]] && want=mismatch
	dts=$(sed -n 's/^dtypes: *\[\(.*\)\]/\1/p' "$m" | tr -d ' ' | tr ',' ' ')
	for dt in ${dts:-f32}; do
		log="$out/$(basename "$(dirname "$m")")-$(basename "$m" .yaml)-$dt"
		"$bin" run "$m" --dtype "$dt" "${fast[@]}" --json >"$log.json" 2>"$log.err"
		python3 - "$log.json" "$log.err" "$m" "$dt" "$want" <<'PY'
import json, sys
path, err, m, dt, want = sys.argv[1:]
try:
    r = json.loads(open(path).readline())
except Exception:
    r = {"status": "no-json", "error": open(err).read().strip().replace("\n", " | ")}
st = r.get("status", "?")
med = (r.get("stats") or {}).get("median_ns")
wob = (r.get("verdict") or {}).get("worst_over_bound")
detail = (r.get("error") or "")[:200].replace("\n", " | ")
mark = "PASS" if st == want else "FAIL(want %s)" % want
print("%-44s %-6s %-10s %-10s %-9s %s %s" % (m[-44:], dt, st, "%.1f" % (med / 1e3) if med else "-", "%.3f" % wob if wob is not None else "-", mark, detail))
PY
	done
done | tee -a "$out/summary.txt"
! grep -q 'FAIL(' "$out/summary.txt"
