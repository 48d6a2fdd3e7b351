#!/usr/bin/env python3
"""Does a GPU kernel's speed settle at a level per measurement, and what
starts a new one? (docs/measuring.md, Reproducibility.)

Times one attention kernel (PyTorch SDPA, bf16, B=1 H=32 L=2048 D=128, the
shape of scripts/cuda-sweep-rate.sh) with CUDA events, the L2 flushed
before each sample, in bursts of BURST samples, and prints the spread of
the bursts' medians (max - min over their median) when the bursts are:

  continuous   one stream of samples, cut into bursts afterwards
  gap G ms     the GPU left idle G ms between bursts (a host sleep)
  other        another kernel (a matmul) run for 50 ms between bursts

If the gapped bursts spread like the continuous ones, an idle gap does not
start a new level; if they spread like separate processes, it does.

Usage: python3 scripts/level_probe.py [BURSTS] [BURST]   (default 12 20)
"""
import sys
import time

import torch
import torch.nn.functional as F


def main():
    bursts = int(sys.argv[1]) if len(sys.argv) > 1 else 12
    burst = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    dev = torch.device("cuda")
    q, k, v = (torch.randn(1, 32, 2048, 128, device=dev, dtype=torch.bfloat16) for _ in range(3))
    flush = torch.empty(256 << 20, dtype=torch.uint8, device=dev)
    a = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)

    def sample():
        flush.zero_()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        F.scaled_dot_product_attention(q, k, v)
        e.record()
        return s, e

    def run(n):
        evs = [sample() for _ in range(n)]
        torch.cuda.synchronize()
        return [s.elapsed_time(e) * 1e3 for s, e in evs]

    def med(xs):
        ys = sorted(xs)
        return ys[len(ys) // 2]

    def report(name, meds):
        m = med(meds)
        print(f"{name:>14}: spread {100 * (max(meds) - min(meds)) / m:5.2f}%  medians " + " ".join(f"{x:.1f}" for x in meds))

    run(200)  # warm-up
    xs = run(bursts * burst)
    report("continuous", [med(xs[i * burst:(i + 1) * burst]) for i in range(bursts)])
    for gap in (2, 20, 200):
        meds = []
        for _ in range(bursts):
            time.sleep(gap / 1e3)
            meds.append(med(run(burst)))
        report(f"gap {gap} ms", meds)
    meds = []
    for _ in range(bursts):
        t = time.time()
        while time.time() - t < 0.05:
            a @ a
        torch.cuda.synchronize()
        meds.append(med(run(burst)))
    report("other 50 ms", meds)


if __name__ == "__main__":
    main()
