# CUDA start-up without mltop: when is each GPU of a multi-GPU host ready
# (cuInit, its primary context, a 1 MiB allocation), for several ways of
# starting one process per GPU (each sees its GPU alone, as mltop's workers
# do) and for one process with a context per GPU. Every process stays alive
# until the last is ready, as mltop's workers do. Times are from a common
# start; their sum is the GPU-seconds a sweep loses before it measures. Each
# process is a fresh Python (about 0.05 s of its own start is in every
# figure). mltop's workers start as "each starts once the previous cuInit
# ended" does (run.ReleaseStartTurn).
#
#   python3 scripts/cuda-ctx-startup.py [REPS]     (NG=4: the GPUs to use)
import ctypes, json, os, subprocess, sys, threading, time
NG = int(os.environ.get("NG", "4"))

def now(t0): return time.time() - t0

def child():
    t0 = float(os.environ["T0"]); gate = os.environ.get("GATE") == "1"
    cu = ctypes.CDLL("libcuda.so.1")
    a = time.time(); assert cu.cuInit(0) == 0; init_end = now(t0); init = time.time() - a
    if gate:
        print(json.dumps({"inited": init_end}), flush=True)
        sys.stdin.readline()
    b = time.time()
    d = ctypes.c_int(); assert cu.cuDeviceGet(ctypes.byref(d), 0) == 0
    c = ctypes.c_void_p(); assert cu.cuDevicePrimaryCtxRetain(ctypes.byref(c), d) == 0
    assert cu.cuCtxSetCurrent(c) == 0
    p = ctypes.c_uint64(); assert cu.cuMemAlloc_v2(ctypes.byref(p), 1 << 20) == 0
    print(json.dumps({"cuinit": init, "ctx": time.time() - b, "ready": now(t0)}), flush=True)
    time.sleep(60)

def spawn(t0, i, gate=False):
    env = dict(os.environ, T0=repr(t0), CUDA_VISIBLE_DEVICES=str(i), GATE="1" if gate else "0")
    return subprocess.Popen([sys.executable, __file__, "child"], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

def show(name, res, extra=""):
    ready = sorted(r["ready"] for r in res)
    print(f"  {name:44s} ready " + ", ".join(f"{x:.2f}" for x in ready) + f" sum {sum(ready):.2f}; cuInit "
          + ", ".join(f"{r['cuinit']:.2f}" for r in res) + "; ctx " + ", ".join(f"{r['ctx']:.2f}" for r in res) + extra, flush=True)

def finish(ps):
    for p in ps: p.kill(); p.wait()
    time.sleep(1)

def in_turn():
    t0 = time.time(); ps, res = [], []
    for i in range(NG):
        p = spawn(t0, i); ps.append(p); res.append(json.loads(p.stdout.readline()))
    show("in turn, each a whole start", res); finish(ps)

def init_together_ctx_in_turn():
    t0 = time.time(); ps = [spawn(t0, i, gate=True) for i in range(NG)]
    inited = [json.loads(p.stdout.readline())["inited"] for p in ps]
    res = []
    for p in ps:
        p.stdin.write("go\n"); p.stdin.flush(); res.append(json.loads(p.stdout.readline()))
    show("cuInit together, contexts in turn", res, "; all inited by " + ", ".join(f"{x:.2f}" for x in inited)); finish(ps)

def init_in_turn_ctx_at_once():
    # each process starts after the previous finished cuInit (not its context)
    t0 = time.time(); ps = []
    for i in range(NG):
        p = spawn(t0, i, gate=True); ps.append(p); json.loads(p.stdout.readline())
        p.stdin.write("go\n"); p.stdin.flush()
    res = [json.loads(p.stdout.readline()) for p in ps]
    show("each starts once the previous cuInit ended", res); finish(ps)

def all_at_once():
    t0 = time.time(); ps = [spawn(t0, i) for i in range(NG)]
    res = [json.loads(p.stdout.readline()) for p in ps]
    show("all at once", res); finish(ps)

def one_process_threads():
    t0 = time.time()
    cu = ctypes.CDLL("libcuda.so.1")
    a = time.time(); assert cu.cuInit(0) == 0; init = time.time() - a
    ready = [0.0] * NG
    def mk(i):
        d = ctypes.c_int(); assert cu.cuDeviceGet(ctypes.byref(d), i) == 0
        c = ctypes.c_void_p(); assert cu.cuDevicePrimaryCtxRetain(ctypes.byref(c), d) == 0
        assert cu.cuCtxSetCurrent(c) == 0
        p = ctypes.c_uint64(); assert cu.cuMemAlloc_v2(ctypes.byref(p), 1 << 20) == 0
        ready[i] = now(t0)
    ts = [threading.Thread(target=mk, args=(i,)) for i in range(NG)]
    for t in ts: t.start()
    for t in ts: t.join()
    r = sorted(ready)
    print(f"  {'one process, contexts in threads':44s} ready " + ", ".join(f"{x:.2f}" for x in r) + f" sum {sum(r):.2f}; cuInit {init:.2f}", flush=True)

if len(sys.argv) > 1 and sys.argv[1] == "child":
    child(); sys.exit()
if len(sys.argv) > 1 and sys.argv[1] == "threads":
    one_process_threads(); sys.exit()
for rep in range(int(sys.argv[1]) if len(sys.argv) > 1 else 2):
    print(f"rep {rep}", flush=True)
    in_turn(); init_together_ctx_in_turn(); init_in_turn_ctx_at_once(); all_at_once()
    subprocess.run([sys.executable, __file__, "threads"]); time.sleep(1)
