#!/usr/bin/env python3
"""The reference loop for sweep rates: Triton's do_bench at its defaults
(25 ms warm-up, 100 ms of repetitions) called N times in a row on PyTorch's
SDPA at the sweep99 shape (bf16, B=1 H=32 L=2048 D=128), as a tuning loop
over N configs would call it. Prints one line: DOBENCH N calls in S s = R calls/s.
Usage: dobench_rate.py N"""
import sys
import time

import torch
import torch.nn.functional as F
from triton.testing import do_bench

n = int(sys.argv[1]) if len(sys.argv) > 1 else 99
q, k, v = (torch.randn(1, 32, 2048, 128, device="cuda", dtype=torch.bfloat16) for _ in range(3))
fn = lambda: F.scaled_dot_product_attention(q, k, v)
do_bench(fn)  # first call: compile and allocate, not counted
t0 = time.perf_counter()
ms = [do_bench(fn) for _ in range(n)]
dt = time.perf_counter() - t0
print(f"DOBENCH {n} calls in {dt:.2f} s = {n / dt:.2f} calls/s (median {sorted(ms)[n // 2]:.3f} ms per call)")
