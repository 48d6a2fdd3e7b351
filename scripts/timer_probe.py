"""The table of scripts/timer-probe-gpu.sh: mltop against ncu against the
kernel's own %globaltimer span, per size, and fits that tell a constant
offset from a ratio. Plain python3, no NumPy.

  python3 timer_probe.py table LOGDIR   -> the tables, from the files the
                                          shell script wrote into LOGDIR
  python3 timer_probe.py selftest       -> checks the fit and the parsers
                                          on made-up numbers (exit 1 if wrong)

LOGDIR holds probe.txt (timer_probe's "TP " lines), ncu-RxC-p{0,1}.csv,
mltop-RxC-p{0,1}.json, builtins.txt (label|kernel|dtype|set|dispatch per
line), builtin-LABEL-mltop.json and builtin-LABEL-ncu.csv.
"""
import json
import math
import os
import statistics
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ beside the scripts
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ncu_csv  # noqa: E402  (scripts/ncu_csv.py)

NCU_METRIC = "gpu__time_duration.sum"


def tp_lines(path):
    """[(kind, {key: value})] of the "TP kind k=v ..." lines of a file."""
    out = []
    if not os.path.exists(path):
        return out
    with open(path, errors="replace") as f:
        for line in f:
            if not line.startswith("TP "):
                continue
            words = line.split()
            kv = {}
            for w in words[2:]:
                k, _, v = w.partition("=")
                try:
                    kv[k] = float(v)
                except ValueError:
                    kv[k] = v
            out.append((words[1], kv))
    return out


def ncu_us(path):
    """(median µs, count) of gpu__time_duration in an ncu --csv file; (None, 0) if none."""
    if not os.path.exists(path):
        return None, 0
    with open(path, errors="replace") as f:
        m = ncu_csv.metrics(f)
    vals = [v for (name, unit), vs in m.items() if name == NCU_METRIC and unit == "ns" for v in vs]
    return (statistics.median(vals) / 1e3, len(vals)) if vals else (None, 0)


def mltop_result(path, dispatch=None):
    """(median µs, status, sm MHz) from mltop run --json output; the named dispatch's median when it has one."""
    if not os.path.exists(path):
        return None, "missing", None
    with open(path, errors="replace") as f:
        rows = [json.loads(l) for l in f if l.startswith("{")]
    if not rows:
        return None, "no result", None
    r = rows[0]
    med = (r.get("stats") or {}).get("median_ns")
    for d in r.get("per_dispatch") or []:
        if d.get("name") == dispatch:
            med = d.get("median_ns") or (d.get("stats") or {}).get("median_ns")
    return (med / 1e3 if med else None), r.get("status", "?"), r.get("sm_clock_mhz")


def fit(xs, ys):
    """Least squares y = a + b·x: (a, b, se_a, se_b); None below 3 points."""
    n = len(xs)
    if n < 3:
        return None
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        return None
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    a = my - b * mx
    s2 = sum((y - a - b * x) ** 2 for x, y in zip(xs, ys)) / (n - 2)
    return a, b, math.sqrt(s2 * (1 / n + mx * mx / sxx)), math.sqrt(s2 / sxx)


def reading(f):
    """What a fit of a difference against the kernel time says, in words."""
    if f is None:
        return "too few sizes to fit"
    a, b, sa, sb = f
    offset = abs(a) > 2 * sa and abs(a) > 0.2
    ratio = abs(b) > 2 * sb and abs(b) > 0.005
    if offset and ratio:
        return "offset and ratio: a fixed part and a part that grows with the kernel"
    if offset:
        return "constant offset: a fixed overhead on one side, not a clock or rate difference"
    if ratio:
        return "ratio: a clock or measurement-rate difference, not a fixed overhead"
    return "no significant difference"


def fmt(v, spec="8.2f"):
    return format(v, spec) if isinstance(v, (int, float)) and v is not None else format("-", ">" + spec.split(".")[0])


def ratio(a, b):
    return a / b if a and b else None


def diff(a, b):
    return a - b if a is not None and b is not None else None


def load(log):
    """Every number of a run, per size, from LOGDIR."""
    probe = tp_lines(os.path.join(log, "probe.txt"))
    info = {k: kv for k, kv in probe if k in ("device", "timer")}
    measured = {"%dx%d" % (kv["rows"], kv["cols"]): kv for k, kv in probe if k == "size"}
    tags = list(measured)
    if os.path.exists(os.path.join(log, "sizes.txt")):  # the sizes asked for, measured by the prober or not
        tags = open(os.path.join(log, "sizes.txt")).read().split()
    sizes = []
    for tag in tags:
        rows, _, cols = tag.partition("x")
        blank = {k: None for k in ("event0_us", "event1_us", "span_us", "span_mean_us", "gap_us", "probe_mhz")}
        row = dict(blank, rows=int(rows), cols=int(cols), mb=2.0 * int(rows) * int(cols) * 4 / 1e6)
        row.update(measured.get(tag, {}))
        row["tag"] = tag
        for p in (0, 1):
            row["ncu%d" % p], row["ncu%d_n" % p] = ncu_us(os.path.join(log, "ncu-%s-p%d.csv" % (tag, p)))
            row["mltop%d" % p], row["status%d" % p], row["mltop_mhz%d" % p] = mltop_result(
                os.path.join(log, "mltop-%s-p%d.json" % (tag, p)), "rmsnorm_rows")
        under = [kv2 for k2, kv2 in tp_lines(os.path.join(log, "ncu-%s-p1.csv" % tag)) if k2 == "ncuprobe"]
        row["span_ncu"] = under[0]["span_us"] if under else None
        row["span_ncu_mean"] = under[0]["span_mean_us"] if under else None
        row["mhz_ncu"] = under[0]["probe_mhz"] if under else None
        sizes.append(row)
    return info, sizes


def span_key(info):
    """Median span, unless %globaltimer ticks coarsely: then the mean, which the tick's phase dithers."""
    step = (info.get("timer") or {}).get("step_median_ns")
    return ("span_mean_us", "span_ncu_mean") if isinstance(step, float) and step > 100 else ("span_us", "span_ncu")


def print_tables(log, out=sys.stdout):
    info, sizes = load(log)
    dev, timer = info.get("device") or {}, info.get("timer") or {}
    sk, sk_ncu = span_key(info)
    w = out.write
    w("device %s (sm_%s, %s SMs, L2 %s B), driver %s\n" % (dev.get("name", "-"), fmt(dev.get("sm"), ".0f"),
      fmt(dev.get("sms"), ".0f"), fmt(dev.get("l2_bytes"), ".0f"), fmt(dev.get("driver"), ".0f")))
    w("%%globaltimer: step min %s ns, median %s ns, max %s ns, %s reads per step; spans use the %s\n\n" % (
        fmt(timer.get("step_min_ns"), ".0f"), fmt(timer.get("step_median_ns"), ".0f"),
        fmt(timer.get("step_max_ns"), ".0f"), fmt(timer.get("reads_per_step"), ".1f"),
        "mean (coarse ticks)" if sk == "span_mean_us" else "median"))
    w("Times, µs (P0: the kernel as it is; P1: with the probe)\n")
    w("%-11s %6s %8s %8s %8s | %8s %8s %8s %9s | %6s %6s %6s %7s\n" % (
        "size", "MB", "ncu", "mltop", "event", "ncu·P1", "mltop·P1", "probe", "probe@ncu", "cost", "gap", "MHz", "MHz@ncu"))
    for r in sizes:
        w("%-11s %6.1f %s %s %s | %s %s %s %s | %s %s %s %s\n" % (
            r["tag"], r["mb"], fmt(r["ncu0"]), fmt(r["mltop0"]), fmt(r["event0_us"]), fmt(r["ncu1"]), fmt(r["mltop1"]),
            fmt(r[sk]), fmt(r[sk_ncu], "9.2f"), fmt(diff(r["event1_us"], r["event0_us"]), "6.2f"), fmt(r["gap_us"], "6.2f"),
            fmt(r["probe_mhz"], "6.0f"), fmt(r["mhz_ncu"], "7.0f")))
    bad = ["%s P%d %s" % (r["tag"], p, r["status%d" % p]) for r in sizes for p in (0, 1)
           if r["status%d" % p] not in ("ok", "unchecked")]
    if bad:
        w("mltop status not ok: %s\n" % ", ".join(bad))
    w("\nRatios\n%-11s %10s %10s %10s %12s\n" % ("size", "mltop/ncu", "probe/ncu", "mltop/probe", "probe@ncu/ncu"))
    for r in sizes:
        w("%-11s %s %s %s %s\n" % (r["tag"], fmt(ratio(r["mltop0"], r["ncu0"]), "10.3f"),
          fmt(ratio(r[sk], r["ncu1"]), "10.3f"), fmt(ratio(r["mltop1"], r[sk]), "10.3f"),
          fmt(ratio(r[sk_ncu], r["ncu1"]), "12.3f")))
    fits = print_fits(sizes, sk, sk_ncu, w)
    print_builtins(log, fits.get("ncu - mltop"), w)


def print_fits(sizes, sk, sk_ncu, w):
    """Each difference fitted against the kernel time: y = a + b·x."""
    defs = [
        ("ncu - mltop", "ncu0", "mltop0", "the issue's gap (P0)"),
        ("ncu - probe", "ncu1", sk, "ncu against the GPU's own span (P1)"),
        ("ncu - probe@ncu", "ncu1", sk_ncu, "the same launches under ncu (P1)"),
        ("mltop - probe", "mltop1", sk, "CUPTI's record against the span (P1)"),
        ("event - mltop", "event0_us", "mltop0", "what events add (P0)"),
    ]
    w("\nFits of a difference against the kernel time x (µs): diff = a + b·x\n")
    w("%-16s %16s %16s  %s\n" % ("diff", "a µs (±se)", "b (±se)", "reading"))
    fits = {}
    for name, top, base, what in defs:
        pts = [(r[base], r[top] - r[base]) for r in sizes if r.get(top) and r.get(base)]  # both measured
        f = fit([p[0] for p in pts], [p[1] for p in pts])
        fits[name] = f
        if f is None:
            w("%-16s %16s %16s  %s; %s\n" % (name, "-", "-", reading(f), what))
            continue
        w("%-16s %+7.2f (%5.2f) %+7.2f%% (%4.2f%%)  %s; %s\n" % (name, f[0], f[2], 100 * f[1], 100 * f[3], reading(f), what))
    return fits


def print_builtins(log, f, w):
    """Built-in short kernels: mltop against ncu, and the ratio the probe kernel's fit predicts for them."""
    path = os.path.join(log, "builtins.txt")
    if not os.path.exists(path):
        return
    w("\nBuilt-in kernels (mltop cold, CUPTI; ncu over mltop with events)\n")
    w("%-14s %-5s %-32s %8s %8s %8s %9s %9s  %s\n" % ("kernel", "dtype", "shape", "mltop", "ncu", "ncu-mltop",
      "mltop/ncu", "predicted", "status"))
    for line in open(path):
        parts = line.strip().split("|")
        if len(parts) != 5:
            continue
        label, kernel, dtype, shape, dispatch = parts
        m, status, _ = mltop_result(os.path.join(log, "builtin-%s-mltop.json" % label), dispatch)
        n, _ = ncu_us(os.path.join(log, "builtin-%s-ncu.csv" % label))
        pred = m / (m + f[0] + f[1] * m) if f and m else None
        w("%-14s %-5s %-32s %s %s %s %s %s  %s\n" % (kernel, dtype, shape, fmt(m), fmt(n),
          fmt(diff(n, m), "9.2f"), fmt(ratio(m, n), "9.3f"), fmt(pred, "9.3f"), status))


def selftest():
    """The fit tells an offset from a ratio; the parsers read what the tools write."""
    failures, checks = [], [0]

    def check(ok, msg):
        checks[0] += 1
        if not ok:
            failures.append(msg)

    xs = [3.0, 6.0, 12.0, 25.0, 40.0, 90.0, 180.0]
    f = fit(xs, [1.5 + 0.001 * ((i * 7) % 3 - 1) for i, _ in enumerate(xs)])
    check(abs(f[0] - 1.5) < 0.01 and "constant offset" in reading(f), "a constant 1.5 µs read as %s %s" % (f, reading(f)))
    f = fit(xs, [0.05 * x for x in xs])
    check(abs(f[1] - 0.05) < 1e-9 and reading(f).startswith("ratio"), "a 5%% ratio read as %s %s" % (f, reading(f)))
    f = fit(xs, [1.0 + 0.03 * x for x in xs])
    check(reading(f).startswith("offset and ratio"), "1 µs + 3%% read as %s" % reading(f))
    f = fit(xs, [0.01 * ((i * 5) % 3 - 1) for i, _ in enumerate(xs)])
    check(reading(f) == "no significant difference", "noise read as %s" % reading(f))
    check(fit([1.0, 2.0], [1.0, 1.0]) is None, "two points were fitted")
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "ncu.csv")
        with open(p, "w") as fh:
            fh.write('TP ncuprobe rows=4 cols=8 n=3 span_us=10.500 span_mean_us=10.600 probe_mhz=1980\n==PROF== x\n')
            fh.write('"ID","Kernel Name","Metric Name","Metric Unit","Metric Value"\n')
            for i, v in enumerate(["12.5", "12.0", "13.0"]):
                fh.write('"%d","rmsnorm_rows","gpu__time_duration.sum","usecond","%s"\n' % (i, v))
        check(ncu_us(p) == (12.5, 3), "ncu csv read as %s, want (12.5, 3)" % (ncu_us(p),))
        want = [("ncuprobe", {"rows": 4, "cols": 8, "n": 3, "span_us": 10.5, "span_mean_us": 10.6, "probe_mhz": 1980})]
        check(tp_lines(p) == want, "TP line read as %s" % tp_lines(p))
        j = os.path.join(d, "m.json")
        with open(j, "w") as fh:
            fh.write("mltop: note\n" + json.dumps({"status": "ok", "stats": {"median_ns": 9000}, "sm_clock_mhz": 1980,
                     "per_dispatch": [{"name": "zero_dW", "median_ns": 1000}, {"name": "k", "median_ns": 8000}]}) + "\n")
        check(mltop_result(j, "k") == (8.0, "ok", 1980) and mltop_result(j)[0] == 9.0,
              "mltop json read as %s / %s" % (mltop_result(j, "k"), mltop_result(j)))
    for msg in failures:
        print("FAIL", msg)
    print("%d passed, %d failed" % (checks[0] - len(failures), len(failures)))
    return 1 if failures else 0


def main(argv):
    if len(argv) == 2 and argv[1] == "selftest":
        return selftest()
    if len(argv) == 3 and argv[1] == "table":
        if not os.path.isdir(argv[2]):
            print("timer_probe.py: %s is not a folder: give the LOG folder timer-probe-gpu.sh wrote" % argv[2], file=sys.stderr)
            return 2
        print_tables(argv[2])
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
