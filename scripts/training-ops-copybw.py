#!/usr/bin/env python3
"""The device's measured copy bandwidth: a 2 GiB device-to-device copy
through torch, timed with CUDA events (median of 20 after warm-up), in
GB/s counting bytes read and written, the figure the memory-bound
families' GB/s are held against (target: >= 70%)."""
import statistics

import torch

n = 1 << 30  # bytes per buffer
src = torch.empty(n, dtype=torch.uint8, device="cuda").fill_(1)
dst = torch.empty_like(src)
for _ in range(3):
    dst.copy_(src)
torch.cuda.synchronize()
times = []
for _ in range(20):
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    dst.copy_(src)
    b.record()
    b.synchronize()
    times.append(a.elapsed_time(b) / 1e3)
t = statistics.median(times)
print(f"copy bandwidth: {2 * n / t / 1e9:.0f} GB/s (torch device-to-device copy of {n >> 20} MiB, median of 20, read+write)")
