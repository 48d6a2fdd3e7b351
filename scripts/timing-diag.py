# Where does an event-timed kernel's extra time come from? (issue 12)
# For a memory-bound elementwise add (y = x + 1) of several sizes, each
# launch preceded by a read flush of 3x L2 as mltop's cold mode does, this
# measures the same launches three ways:
#   events  CUDA events recorded right after the flush and right after the
#           kernel (mltop's CUDA timer);
#   cupti   the kernel's own start/end GPU timestamps from CUPTI activity
#           records (through torch.profiler), same run;
#   ncu     (mode "ncu", run under ncu by the caller) gpu__time_duration.
# Usage: python3 timing-diag.py events|ncu SIZE_ELEMS REPS
import json, os, statistics, sys, tempfile
import torch

mode, n, reps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
dev = torch.device("cuda")
l2 = torch.cuda.get_device_properties(0).L2_cache_size
flush = torch.ones(3 * l2 // 4, dtype=torch.float32, device=dev)
x = torch.randn(n, device=dev)
y = torch.empty_like(x)
sink = torch.empty((), device=dev)

def run(timed):
    evs = []
    for _ in range(reps):
        torch.sum(flush, dim=0, out=sink)  # read flush: clean lines
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        torch.add(x, 1.0, out=y)
        b.record()
        evs.append((a, b))
    torch.cuda.synchronize()
    return [a.elapsed_time(b) * 1e3 for a, b in evs]

run(False)  # warm-up
if mode == "ncu":
    run(False)
    sys.exit(0)
from torch.profiler import profile, ProfilerActivity
with profile(activities=[ProfilerActivity.CUDA, ProfilerActivity.CPU]) as prof:
    ev = run(True)
path = tempfile.mktemp(suffix=".json")
prof.export_chrome_trace(path)
tr = json.load(open(path))
durs = [e["dur"] for e in tr["traceEvents"] if e.get("cat") == "kernel" and "elementwise" in e.get("name", "")]
ev = ev[5:]
durs = durs[5:]
me, mc = statistics.median(ev), statistics.median(durs) if durs else float("nan")
print(f"DIAG n={n} bytes={8*n/1e6:.1f}MB events_us={me:.3f} cupti_us={mc:.3f} diff_us={me-mc:.3f} (samples {len(ev)}/{len(durs)})")
