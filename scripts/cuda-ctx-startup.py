# CUDA start-up without mltop: cuInit and primary contexts alone, 4 at once,
# one after another, and one process for 4 GPUs (ctypes on libcuda; run on a
# host with 4 GPUs: python3 scripts/cuda-ctx-startup.py)
import ctypes, os, sys, time, subprocess, threading
def child():
    t0 = time.time()
    cu = ctypes.CDLL("libcuda.so.1")
    assert cu.cuInit(0) == 0
    t1 = time.time()
    n = ctypes.c_int(); cu.cuDeviceGetCount(ctypes.byref(n))
    def ctx(i, out):
        d = ctypes.c_int(); cu.cuDeviceGet(ctypes.byref(d), i)
        c = ctypes.c_void_p(); assert cu.cuDevicePrimaryCtxRetain(ctypes.byref(c), d) == 0
        assert cu.cuCtxSetCurrent(c) == 0
        p = ctypes.c_uint64(); assert cu.cuMemAlloc_v2(ctypes.byref(p), 1 << 20) == 0
        out[i] = time.time()
    out = {}
    if os.environ.get("PAR") == "1":
        th = [threading.Thread(target=ctx, args=(i, out)) for i in range(n.value)]
        [x.start() for x in th]; [x.join() for x in th]
    else:
        for i in range(n.value): ctx(i, out)
    print(f"  pid {os.getpid()} gpus {n.value}: cuInit {1e3*(t1-t0):.0f} ms, contexts ready at " + ", ".join(f"{1e3*(out[i]-t0):.0f}" for i in sorted(out)) + f" ms (start {t0%100:.3f})", flush=True)
if len(sys.argv) > 1:
    child(); sys.exit()
def spawn(dev, par="0"):
    env = dict(os.environ, CUDA_VISIBLE_DEVICES=dev, PAR=par)
    return subprocess.Popen([sys.executable, __file__, "child"], env=env)
for rep in range(2):
    print(f"rep {rep}")
    t = time.time(); spawn("0").wait(); print(f" A one GPU alone: {time.time()-t:.2f} s")
    t = time.time(); ps = [spawn(str(i)) for i in range(4)]; [p.wait() for p in ps]; print(f" B 4 at once: {time.time()-t:.2f} s")
    t = time.time()
    for i in range(4): spawn(str(i)).wait()
    print(f" C 4 one after another: {time.time()-t:.2f} s")
    t = time.time(); spawn("0,1,2,3").wait(); print(f" D one process, 4 contexts in turn: {time.time()-t:.2f} s")
    t = time.time(); spawn("0,1,2,3", "1").wait(); print(f" E one process, 4 contexts in threads: {time.time()-t:.2f} s")
