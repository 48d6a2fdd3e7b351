"""What scripts/cuda-sdpa.py (forward) and scripts/attn-bwd-sdpa.py
(backward) share: the command line, the bf16 inputs at mltop's benchmark
shape, CUDA-event timing with the L2 flushed before each sample (mltop's
cold mode), and the dense/causal report against mltop's figures."""
import argparse
import statistics

import torch


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--L", type=int, default=4096)
    ap.add_argument("--B", type=int, default=1)
    ap.add_argument("--H", type=int, default=32)
    ap.add_argument("--D", type=int, default=128)
    ap.add_argument("--mltop-dense", type=float, default=0)
    ap.add_argument("--mltop-causal", type=float, default=0)
    return ap.parse_args()


class Bench:
    """Seeded q, k, v (B, H, L, D) bf16 tensors on the GPU, plus dO when
    grad is set (q, k, v then require grad)."""

    def __init__(self, a, grad=False):
        self.a = a
        dev = torch.device("cuda")
        g = torch.Generator(device=dev).manual_seed(1)
        shape = (a.B, a.H, a.L, a.D)

        def randn():
            return torch.randn(*shape, device=dev, dtype=torch.bfloat16, generator=g)

        self.q, self.k, self.v = (randn().requires_grad_() if grad else randn() for _ in range(3))
        if grad:
            self.do = randn()
        l2 = torch.cuda.get_device_properties(0).L2_cache_size
        self.flush = torch.empty(2 * l2, dtype=torch.uint8, device=dev)

    def time(self, fn, reps):
        """Median seconds of fn over reps samples after 5 warm-up calls,
        each sample timed by CUDA events after an L2 flush."""
        for _ in range(5):
            fn()
        torch.cuda.synchronize()
        ts = []
        for i in range(reps):
            self.flush.fill_(i & 0xFF)
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            fn()
            e.record()
            e.synchronize()
            ts.append(s.elapsed_time(e) * 1e-3)
        return statistics.median(ts)

    def report(self, bench, flops_per_pair, label, time_fmt, mine_label):
        """For dense then causal: runs bench(causal) (seconds) and prints
        the time (time_fmt of seconds), TFLOP/s with flops_per_pair FLOPs
        per unmasked (query, key) pair, and the ratio to mltop's figure."""
        a = self.a
        print(f"device {torch.cuda.get_device_name(0)}, torch {torch.__version__}")
        for causal, mine in ((False, a.mltop_dense), (True, a.mltop_causal)):
            pairs = a.L * a.L if not causal else a.L * (a.L + 1) // 2
            flops = flops_per_pair * pairs * a.B * a.H
            t = bench(causal)
            tf = flops / t / 1e12
            line = f"{label} B={a.B} H={a.H} D={a.D} L={a.L} causal={causal}: {time_fmt(t)}, {tf:.1f} TFLOP/s"
            if mine > 0:
                line += f"; {mine_label} {mine:.1f} TFLOP/s, ratio mltop/torch {mine/tf:.2f}"
            print(line)
