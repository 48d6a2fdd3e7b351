"""Medians of the metrics in Nsight Compute's --csv output.

Used by scripts/cuda-fidelity.sh and scripts/timing-diag.sh. Durations are
converted to nanoseconds whatever unit ncu chose; other metrics keep ncu's
unit. Lines that are not CSV rows (the profiled program's own output, ncu's
==PROF== notes) are skipped.

  python3 ncu_csv.py FILE METRIC   -> "median count" of METRIC (0 0 if absent)
  python3 ncu_csv.py FILE          -> "name(unit)=median ..." of every metric
"""
import csv
import statistics
import sys

TO_NS = {"nsecond": 1, "ns": 1, "usecond": 1e3, "us": 1e3, "msecond": 1e6, "ms": 1e6, "second": 1e9, "s": 1e9}


def metrics(lines):
    """{(name, unit): [values]} from ncu --csv lines; durations in ns."""
    out = {}
    for r in csv.DictReader(l for l in lines if l.startswith('"')):
        name, unit = r.get("Metric Name", ""), r.get("Metric Unit", "")
        v = float(r["Metric Value"].replace(",", ""))
        if unit in TO_NS:
            v, unit = v * TO_NS[unit], "ns"
        out.setdefault((name, unit), []).append(v)
    return out


def main(argv):
    with open(argv[1]) as f:
        m = metrics(f)
    if len(argv) > 2:
        vals = [v for (name, _), vs in m.items() if name == argv[2] for v in vs]
        print(statistics.median(vals) if vals else 0, len(vals))
    else:
        print(" ".join(f"{n}({u})={statistics.median(v):.2f}" for (n, u), v in m.items()))


if __name__ == "__main__":
    main(sys.argv)
