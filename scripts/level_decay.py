#!/usr/bin/env python3
"""How long does what ran before a measurement slow it? (docs/measuring.md,
Reproducibility: after 50 ms of a bf16 matmul, SDPA bursts ran 25-40% slow.)

Times PyTorch SDPA (bf16, B=1 H=32 L=2048 D=128, the shape of
scripts/cuda-sweep-rate.sh) back to back for SPAN ms after each of:
  idle       the GPU idle 300 ms
  matmul N   N ms of an 8192^2 bf16 matmul, then SDPA at once
  copy 50    50 ms of a 1 GiB device copy (memory-bound, little power)
and prints the median of the samples starting in bins of time after the
start (0-2 ms, 2-5, 5-10, ... 1280-2560), so the recovery's time
constant can be read off. With --flush each
sample zeroes a 256 MiB buffer first (as the level probe does).

Usage: python3 scripts/level_decay.py [SPAN_MS] [--flush]
"""
import sys
import time

import torch
import torch.nn.functional as F


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    span = float(args[0]) if args else 1300
    window = 20
    flush_each = "--flush" in sys.argv
    dev = torch.device("cuda")
    q, k, v = (torch.randn(1, 32, 2048, 128, device=dev, dtype=torch.bfloat16) for _ in range(3))
    flush = torch.empty(256 << 20, dtype=torch.uint8, device=dev)
    a = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
    src = torch.empty(1 << 30, dtype=torch.uint8, device=dev)
    dst = torch.empty_like(src)

    def stream(ms):
        """SDPA back to back for about ms; returns (start_ms, us) per sample."""
        evs = []
        t0 = time.time()
        base = torch.cuda.Event(enable_timing=True)
        base.record()
        while (time.time() - t0) * 1e3 < ms or len(evs) < window:
            if flush_each:
                flush.zero_()
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            F.scaled_dot_product_attention(q, k, v)
            e.record()
            evs.append((s, e))
            if len(evs) % 64 == 0:
                e.synchronize()  # keep the host from running far ahead of the GPU
        torch.cuda.synchronize()
        return [(base.elapsed_time(s), s.elapsed_time(e) * 1e3) for s, e in evs]

    def busy(fn, ms):
        torch.cuda.synchronize()
        t = time.time()
        while (time.time() - t) * 1e3 < ms:
            fn()
            torch.cuda.synchronize()

    edges = [0, 2, 5, 10, 20, 40, 80, 160, 320, 640, 1280, 2560]

    def report(name, xs):
        bins = []
        for lo, hi in zip(edges, edges[1:]):
            w = sorted(u for t, u in xs if lo <= t < hi)
            if w:
                bins.append((lo, hi, w[len(w) // 2], len(w)))
        last = bins[-1][2]
        print(f"{name}: last bin {last:.1f} us; bin (ms after start): median (% over the last bin, samples)")
        print("   " + "  ".join(f"{lo}-{hi}:{m:.1f}({100 * (m / last - 1):+.2f},{n})" for lo, hi, m, n in bins))

    stream(300)  # warm-up
    conds = [
        ("idle 300 ms", lambda: time.sleep(0.3)),
        ("matmul 50 ms", lambda: busy(lambda: a @ a, 50)),
        ("matmul 200 ms", lambda: busy(lambda: a @ a, 200)),
        ("copy 50 ms", lambda: busy(lambda: dst.copy_(src), 50)),
        ("idle 300 ms (again)", lambda: time.sleep(0.3)),
        ("matmul 50 ms (again)", lambda: busy(lambda: a @ a, 50)),
    ]
    for name, before in conds:
        before()
        report(name, stream(span))


if __name__ == "__main__":
    main()
