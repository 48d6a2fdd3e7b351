#!/usr/bin/env python3
"""Sum mltop --json results: specs, wall time, stop reasons, and where the
time went (Result.phases). Usage: phases-summary.py LABEL FILE.jsonl [...]"""
import collections
import json
import sys

ORDER = ["plan", "compile", "alloc", "inputs", "reference", "verify", "warmup",
         "measure", "verify_after", "free", "worker"]
# Not phases of their own: "ahead" is work done before a spec ran, off its
# critical path; "verify_gpu" is the device's part of "verify" (the checks'
# kernel runs, where the backend times them). Neither adds to wall time.
NOT_WALL = ("ahead", "verify_gpu")


def load(path):
    rows = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("{"):
                rows.append(json.loads(line))
    return rows


def phase_sums(rows):
    ph = collections.Counter()
    for r in rows:
        for k, v in (r.get("phases") or {}).items():
            ph[k] += v
    return ph


def device_seconds(rows):
    """(measuring, running kernels) seconds of the rows: warm-up and timed
    samples, and those plus the checks' runs (verify_gpu)."""
    ph = phase_sums(rows)
    measuring = ph.get("warmup", 0) + ph.get("measure", 0)
    return measuring, measuring + min(ph.get("verify_gpu", 0), ph.get("verify", 0))


def summary(label, rows):
    wall = sum(r.get("wall_s", 0) for r in rows)
    ph = phase_sums(rows)
    stops = collections.Counter(r.get("stop_reason", "?") for r in rows)
    status = collections.Counter(r.get("status") for r in rows)
    ns = sorted(r.get("stats", {}).get("n", 0) for r in rows)
    tot = sum(v for k, v in ph.items() if k not in NOT_WALL)
    print(f"{label}: {len(rows)} specs, {wall:.2f} s in specs ({1e3 * wall / max(len(rows), 1):.0f} ms/spec), "
          f"status {dict(status)}, stopped on {dict(stops)}, samples median {ns[len(ns) // 2] if ns else 0}")
    if tot > 0:
        parts = [f"{k} {1e3 * ph[k] / len(rows):.1f}" for k in ORDER if ph.get(k, 0) > 0]
        if ph.get("verify_gpu", 0) > 0:
            i = next(i for i, p in enumerate(parts) if p.startswith("verify "))
            parts[i] += f" (GPU {1e3 * ph['verify_gpu'] / len(rows):.1f})"
        measuring, running = device_seconds(rows)
        shares = f"not measuring: {100 * (tot - measuring) / tot:.0f}%"
        if running > measuring:
            shares += f", not running kernels: {100 * (tot - running) / tot:.0f}%"
        ahead = f"   ahead (off the critical path) {1e3 * ph['ahead'] / len(rows):.1f}" if ph.get("ahead", 0) > 0 else ""
        print(f"  ms per spec: {'  '.join(parts)}   ({shares}){ahead}")


if __name__ == "__main__":
    args = sys.argv[1:]
    for i in range(0, len(args) - 1, 2):
        summary(args[i], load(args[i + 1]))
