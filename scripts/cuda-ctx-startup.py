# CUDA start-up without mltop: when is each GPU of a multi-GPU host ready
# (cuInit, its primary context, a 1 MiB allocation), for several ways of
# starting one process per GPU. Every process stays alive until the last is
# ready, as mltop's workers do. Times are from a common start; their sum is
# the GPU-seconds a sweep loses before it measures. Each process is a fresh
# Python (about 0.05 s of its own start is in every figure).
#
#   python3 scripts/cuda-ctx-startup.py [REPS]     (NG=4: the GPUs to use)
import ctypes, json, os, subprocess, sys, time

NG = int(os.environ.get("NG", "4"))


def child():
    t0 = float(os.environ["T0"])
    start = time.time() - t0
    cu = ctypes.CDLL("libcuda.so.1")
    a = time.time()
    assert cu.cuInit(0) == 0
    init = time.time() - a
    ready = []
    for i in [int(x) for x in os.environ["CTX"].split(",") if x]:
        d = ctypes.c_int()
        assert cu.cuDeviceGet(ctypes.byref(d), i) == 0
        c = ctypes.c_void_p()
        assert cu.cuDevicePrimaryCtxRetain(ctypes.byref(c), d) == 0
        assert cu.cuCtxSetCurrent(c) == 0
        p = ctypes.c_uint64()
        assert cu.cuMemAlloc_v2(ctypes.byref(p), 1 << 20) == 0
        ready.append(time.time() - t0)
    print(json.dumps({"start": start, "cuinit": init, "ready": ready}), flush=True)
    sys.stdout.close()
    time.sleep(60)  # alive until the parent ends it


def spawn(t0, visible, ctx):
    env = dict(os.environ, T0=repr(t0), CTX=ctx)
    env.pop("CUDA_VISIBLE_DEVICES", None)
    if visible is not None:
        env["CUDA_VISIBLE_DEVICES"] = visible
    return subprocess.Popen([sys.executable, __file__, "child"], env=env, stdout=subprocess.PIPE, text=True)


def wait_ready(p):
    return json.loads(p.stdout.readline())


def arrangement(name, groups, visible_all=False, holder=False):
    """groups: GPU indices started together, each group once the one before is ready."""
    t0 = time.time()
    live, res = [], []
    if holder:  # one more process that sees every GPU and makes no context
        h = spawn(t0, None, "")
        live.append(h)
        hr = wait_ready(h)
        name += f" (its cuInit {hr['cuinit']:.2f} s)"
    for g in groups:
        ps = [spawn(t0, None if visible_all else str(i), str(i)) for i in g]
        live += ps
        res += [wait_ready(p) for p in ps]
    ready = sorted(x for r in res for x in r["ready"])
    print(f"  {name:52s} ready at " + ", ".join(f"{x:.2f}" for x in ready)
          + f" s, sum {sum(ready):.2f}; cuInit " + ", ".join(f"{r['cuinit']:.2f}" for r in res), flush=True)
    for p in live:
        p.kill()
        p.wait()
    time.sleep(1)  # let the driver tear the contexts down before the next


if len(sys.argv) > 1 and sys.argv[1] == "child":
    child()
    sys.exit()
one_by_one = [[i] for i in range(NG)]
for rep in range(int(sys.argv[1]) if len(sys.argv) > 1 else 3):
    print(f"rep {rep}")
    arrangement("one GPU alone", [[0]])
    arrangement("in turn, each sees its GPU (mltop)", one_by_one)
    arrangement("two at a time", [list(range(k, min(k + 2, NG))) for k in range(0, NG, 2)])
    arrangement("all at once", [list(range(NG))])
    arrangement("in turn, each sees every GPU", one_by_one, visible_all=True)
    t0 = time.time()
    p = spawn(t0, None, ",".join(map(str, range(NG))))
    r = wait_ready(p)
    print(f"  {'one process, every context in turn':52s} ready at " + ", ".join(f"{x:.2f}" for x in r["ready"])
          + f" s, sum {sum(r['ready']):.2f}; cuInit {r['cuinit']:.2f}", flush=True)
    p.kill()
    p.wait()
    time.sleep(1)
    arrangement("a process holding cuInit of every GPU, then in turn", one_by_one, holder=True)
