#!/usr/bin/env python3
"""torch.nn.functional.scaled_dot_product_attention at mltop's benchmark
shape (bf16, B=1, H=32, D=128, L=4096; dense and causal), timed with CUDA
events (median of 50 after warm-up, L2 flushed before each sample like
mltop's cold mode), in TFLOP/s with mltop's FLOP count (4·D per unmasked
pair). Given mltop's figures it prints the ratio.

usage: cuda-sdpa.py [--L 4096] [--mltop-dense TFLOPS] [--mltop-causal TFLOPS]
"""
import torch.nn.functional as F

from sdpa_bench import Bench, parse_args

a = parse_args()
b = Bench(a)


def bench(causal):
    return b.time(lambda: F.scaled_dot_product_attention(b.q, b.k, b.v, is_causal=causal), 50)


b.report(bench, 4 * a.D, "SDPA bf16", lambda t: f"{t*1e6:.1f} µs", "mltop")
