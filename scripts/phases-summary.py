#!/usr/bin/env python3
"""Sum mltop --json results: specs, wall time, stop reasons, and where the
time went (Result.phases). Usage: phases-summary.py LABEL FILE.jsonl [...]"""
import collections
import json
import sys

ORDER = ["plan", "compile", "alloc", "inputs", "reference", "verify", "warmup",
         "measure", "verify_after", "free", "worker"]


def load(path):
    rows = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("{"):
                rows.append(json.loads(line))
    return rows


def summary(label, rows):
    wall = sum(r.get("wall_s", 0) for r in rows)
    ph = collections.Counter()
    for r in rows:
        for k, v in (r.get("phases") or {}).items():
            ph[k] += v
    stops = collections.Counter(r.get("stop_reason", "?") for r in rows)
    status = collections.Counter(r.get("status") for r in rows)
    ns = sorted(r.get("stats", {}).get("n", 0) for r in rows)
    # "ahead" is work done before a spec ran, off its critical path: not
    # part of its wall time.
    tot = sum(v for k, v in ph.items() if k != "ahead")
    print(f"{label}: {len(rows)} specs, {wall:.2f} s in specs ({1e3 * wall / max(len(rows), 1):.0f} ms/spec), "
          f"status {dict(status)}, stopped on {dict(stops)}, samples median {ns[len(ns) // 2] if ns else 0}")
    if tot > 0:
        parts = [f"{k} {1e3 * ph[k] / len(rows):.1f}" for k in ORDER if ph.get(k, 0) > 0]
        overhead = tot - ph.get("measure", 0) - ph.get("warmup", 0)
        ahead = f"   ahead (off the critical path) {1e3 * ph['ahead'] / len(rows):.1f}" if ph.get("ahead", 0) > 0 else ""
        print(f"  ms per spec: {'  '.join(parts)}   (not measuring: {100 * overhead / tot:.0f}%){ahead}")


if __name__ == "__main__":
    args = sys.argv[1:]
    for i in range(0, len(args) - 1, 2):
        summary(args[i], load(args[i + 1]))
