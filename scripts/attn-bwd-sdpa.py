#!/usr/bin/env python3
"""The backward of torch.nn.functional.scaled_dot_product_attention at
mltop's attention-backward benchmark shape (bf16, B=1, H=32, D=128,
L=4096; dense and causal), timed with CUDA events around the backward
only (autograd.grad of a forward kept alive; median of 30 after warm-up;
L2 flushed before each sample like mltop's cold mode), in TFLOP/s with
mltop's FLOP count (2.5 × forward = 10·D per unmasked pair). Given
mltop's figures (TFLOP/s of attn_bwd) it prints the ratio.

usage: attn-bwd-sdpa.py [--L 4096] [--D 128] [--mltop-dense TF] [--mltop-causal TF]
"""
import argparse
import statistics

import torch
import torch.nn.functional as F

ap = argparse.ArgumentParser()
ap.add_argument("--L", type=int, default=4096)
ap.add_argument("--B", type=int, default=1)
ap.add_argument("--H", type=int, default=32)
ap.add_argument("--D", type=int, default=128)
ap.add_argument("--mltop-dense", type=float, default=0)
ap.add_argument("--mltop-causal", type=float, default=0)
a = ap.parse_args()

dev = torch.device("cuda")
g = torch.Generator(device=dev).manual_seed(1)
shape = (a.B, a.H, a.L, a.D)
q, k, v = (torch.randn(*shape, device=dev, dtype=torch.bfloat16, generator=g).requires_grad_() for _ in range(3))
do = torch.randn(*shape, device=dev, dtype=torch.bfloat16, generator=g)
l2 = torch.cuda.get_device_properties(0).L2_cache_size
flush = torch.empty(2 * l2, dtype=torch.uint8, device=dev)


def bench(causal):
    o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    for _ in range(5):
        torch.autograd.grad(o, (q, k, v), do, retain_graph=True)
    torch.cuda.synchronize()
    ts = []
    for i in range(30):
        flush.fill_(i & 0xFF)
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        torch.autograd.grad(o, (q, k, v), do, retain_graph=True)
        e.record()
        e.synchronize()
        ts.append(s.elapsed_time(e) * 1e-3)
    return statistics.median(ts)


print(f"device {torch.cuda.get_device_name(0)}, torch {torch.__version__}")
for causal, mine in ((False, a.mltop_dense), (True, a.mltop_causal)):
    pairs = a.L * a.L if not causal else a.L * (a.L + 1) // 2
    flops = 2.5 * 4 * a.D * pairs * a.B * a.H
    t = bench(causal)
    tf = flops / t / 1e12
    line = f"SDPA backward bf16 B={a.B} H={a.H} D={a.D} L={a.L} causal={causal}: {t*1e3:.3f} ms, {tf:.1f} TFLOP/s"
    if mine > 0:
        line += f"; mltop attn_bwd {mine:.1f} TFLOP/s, ratio mltop/torch {mine/tf:.2f}"
    print(line)
