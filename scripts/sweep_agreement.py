"""Rows of two runs of one sweep (mltop --json lines), matched by spec.

Shared by scripts/cuda-sweep-rate.sh and scripts/cuda-repro.sh, which
report how far the medians of the same specs moved between two runs.
"""
import json


def key(r):
    """The spec of a result row, as a string that is equal for equal specs."""
    s = r["spec"]
    return json.dumps([s.get("kernel"), s.get("knobs"), s.get("dims"), s.get("flags"), s.get("dtype")], sort_keys=True)


def pairs(a, b):
    """The specs that are ok in both runs, in b's order: (index of the row
    in a, the knobs, median in a, median in b), medians in ns."""
    ma = {key(r): (i, r) for i, r in enumerate(a) if r.get("status") == "ok"}
    out = []
    for r in b:
        k = key(r)
        if r.get("status") == "ok" and k in ma:
            i, ra = ma[k]
            out.append((i, r["spec"].get("knobs"), ra["stats"]["median_ns"], r["stats"]["median_ns"]))
    return out


def cycle_pairs(a, b):
    """Like pairs, with each median times the SM clock measured during it
    (sm_clock_mhz): the kernel's length in core cycles, in ns at 1 GHz.
    Specs without a clock in either run are left out."""
    ma = {key(r): (i, r) for i, r in enumerate(a) if r.get("status") == "ok"}
    out = []
    for r in b:
        k = key(r)
        if r.get("status") == "ok" and k in ma:
            i, ra = ma[k]
            ca, cb = ra.get("sm_clock_mhz", 0), r.get("sm_clock_mhz", 0)
            if ca > 0 and cb > 0:
                out.append((i, r["spec"].get("knobs"), ra["stats"]["median_ns"] * ca / 1e3, r["stats"]["median_ns"] * cb / 1e3))
    return out
