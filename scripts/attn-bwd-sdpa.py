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
import torch
import torch.nn.functional as F

from sdpa_bench import Bench, parse_args

a = parse_args()
b = Bench(a, grad=True)


def bench(causal):
    o = F.scaled_dot_product_attention(b.q, b.k, b.v, is_causal=causal)
    return b.time(lambda: torch.autograd.grad(o, (b.q, b.k, b.v), b.do, retain_graph=True), 30)


b.report(bench, 2.5 * 4 * a.D, "SDPA backward bf16", lambda t: f"{t*1e3:.3f} ms", "mltop attn_bwd")
