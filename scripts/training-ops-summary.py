#!/usr/bin/env python3
"""Best config per (kernel, dtype, shape) from mltop CSVs: the ok row with
the most GB/s (memory-bound families) or TFLOP/s (sdpa_multi,
gated_delta_chunk), with its % of the measured copy bandwidth. Also counts
the rows by status.

usage: training-ops-summary.py COPY_GBPS file.csv [file.csv ...]
"""
import collections
import csv
import sys

KNOBS = {"WG", "VEC", "RPG", "RB", "ST", "CL", "GATHER", "TPG", "TILE", "BV"}
COMPUTE = {"sdpa_multi", "gated_delta_chunk"}
copy = float(sys.argv[1]) if sys.argv[1] != "-" else 0.0
best = {}
status = collections.Counter()
for path in sys.argv[2:]:
    try:
        rows = list(csv.DictReader(open(path)))
    except OSError as e:
        print(f"{path}: {e}")
        continue
    for r in rows:
        status[(r["kernel"], r["status"])] += 1
        if r["status"] != "ok" or not r.get("median_us"):
            continue
        cols = list(r)
        dims = tuple(r[c] for c in cols[cols.index("dtype") + 1 : cols.index("n")] if c not in KNOBS)
        key = (r["kernel"], r["dtype"], dims)
        metric = "tflops" if r["kernel"] in COMPUTE else "gbps"
        if key not in best or float(r[metric] or 0) > float(best[key][metric] or 0):
            best[key] = r

for (k, st), n in sorted(status.items()):
    print(f"{k:20s} {st:14s} {n}")
print()
for (k, dt, _), r in sorted(best.items()):
    gbps = float(r["gbps"] or 0)
    pct = f"{100 * gbps / copy:5.1f}% of copy" if copy else ""
    cols = list(r)
    spec = " ".join(f"{c}={r[c]}" for c in cols[cols.index("dtype") + 1 : cols.index("n")] if r[c])
    print(f"{k:18s} {dt:5s} {float(r['median_us']):9.1f} us {gbps:7.0f} GB/s {pct} {float(r['tflops'] or 0):7.2f} TFLOP/s  {spec}")
