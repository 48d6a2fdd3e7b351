"""Rows of two runs of one sweep (mltop --json lines), matched by spec.

Shared by scripts/cuda-sweep-rate.sh and scripts/cuda-repro.sh, which
report how far the medians of the same specs moved between two runs.
"""
import json


def key(r):
    """The spec of a result row, as a string that is equal for equal specs."""
    s = r["spec"]
    return json.dumps([s.get("kernel"), s.get("knobs"), s.get("dims"), s.get("flags"), s.get("dtype")], sort_keys=True)


def pairs(a, b, value=lambda r: r["stats"]["median_ns"]):
    """The specs that are ok in both runs, in b's order: (index of the row
    in a, the knobs, value in a, value in b); the value is the median in
    ns unless said, and specs whose value is None in either run are left
    out."""
    ma = {key(r): (i, r) for i, r in enumerate(a) if r.get("status") == "ok"}
    out = []
    for r in b:
        k = key(r)
        if r.get("status") == "ok" and k in ma:
            i, ra = ma[k]
            x, y = value(ra), value(r)
            if x is not None and y is not None:
                out.append((i, r["spec"].get("knobs"), x, y))
    return out


def cycles(r):
    """The median times the SM clock measured during it (sm_clock_mhz):
    the kernel's length in core cycles, in ns at 1 GHz; None without a clock."""
    c = r.get("sm_clock_mhz", 0)
    return r["stats"]["median_ns"] * c / 1e3 if c > 0 else None


def cycle_pairs(a, b):
    """pairs of the medians in core cycles (see cycles)."""
    return pairs(a, b, cycles)
