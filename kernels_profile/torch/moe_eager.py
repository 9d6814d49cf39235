#!/usr/bin/env python3
"""Checks hetsim's stated model of two pieces of eager work GPT-OSS's experts run in Megatron-Core
(workloads/op_graph.hpp, eager_expert_bias_bytes; workloads/moe_ops.cpp, glu_clamp) on this GPU, and
prints the comparison (nothing is filed: the model stays stated until these numbers are read):

  expert bias   TEGroupedMLP._apply_bias (Megatron-LM 2edffad): per local expert `t + b * p` over its
                rows, the routing weights p in fp32, then torch.cat and .to(bf16). hetsim: per output
                element 28 bytes forward in 2 kernels per expert and 2, 40 bytes backward in 5 per
                expert and 2.
  GLU clamp     weighted_bias_quick_geglu_impl's clamps: the two halves of the fc1 output clamped
                into tensors of their own and concatenated. hetsim: 8 elements per activation output
                forward, 10 backward, 3 kernels each way.

For each pass it prints the kernels the profiler saw against hetsim's count, the time eagerly
launched back to back and replayed from a CUDA graph, and the bandwidth the stated bytes imply, beside
a plain copy's. Shapes: GPT-OSS-120B's hidden 2880 at 16 local experts of 1024 and 4096 rows (EP 8,
micro-batch 1 and 4) and 2 of 32768 (EP 64, micro-batch 4).

Usage: moe_eager.py [--quick]
"""
import argparse
import sys

import torch
from torch.profiler import ProfilerActivity, profile

from timing import graph_median_seconds, identity, median_seconds

HIDDEN = 2880


def apply_bias(t, biases, probs, rows):
    """Megatron-Core's eager _apply_bias, as at the 26.04.01 container's commit."""
    return torch.cat([x + b * p for x, b, p in zip(torch.split(t, rows), biases, torch.split(probs, rows))]).to(t.dtype)


def clamp_cat(x, limit=7.0):
    x_glu, x_linear = x.chunk(2, -1)
    return torch.cat((x_glu.clamp(min=None, max=limit), x_linear.clamp(min=-limit, max=limit)), -1)


def kernels(fn):
    """CUDA kernels one call of fn launches (the profiler's count)."""
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    return sum(1 for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA)


def check(name, forward, backward, stated_fwd, stated_bwd, copy_bps):
    for label, fn, (stated_bytes, stated_kernels) in (("fwd", forward, stated_fwd), ("bwd", backward, stated_bwd)):
        eager = median_seconds(fn)
        try:
            graphed = graph_median_seconds(fn)
        except Exception:  # noqa: BLE001 - autograd's backward may not capture: say so
            graphed = float("nan")
        seen = kernels(fn)
        print(f"{name} {label}: {seen} kernels (hetsim {stated_kernels}); eager {eager * 1e6:.0f} us, graph "
              f"{graphed * 1e6:.0f} us; the stated {stated_bytes / 1e9:.2f} GB at {stated_bytes / eager / 1e12:.2f} TB/s "
              f"eager (a copy: {copy_bps / 1e12:.2f} TB/s)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("moe_eager.py: no CUDA device", file=sys.stderr)
        return 2
    print("moe_eager.py:", *identity())
    big = torch.empty(1 << 28, dtype=torch.bfloat16, device="cuda")
    out = torch.empty_like(big)
    copy_bps = 2 * big.numel() * 2 / graph_median_seconds(lambda: out.copy_(big))
    del big, out
    shapes = [(16, 1024), (16, 4096), (2, 32768)]
    for experts, per in shapes[:1] if args.quick else shapes:
        rows = [per] * experts
        n = experts * per * HIDDEN
        t = torch.randn(experts * per, HIDDEN, dtype=torch.bfloat16, device="cuda", requires_grad=True)
        probs = torch.rand(experts * per, 1, dtype=torch.float32, device="cuda", requires_grad=True)
        biases = [torch.randn(HIDDEN, dtype=torch.bfloat16, device="cuda", requires_grad=True) for _ in range(experts)]
        y = apply_bias(t, biases, probs, rows)
        grad = torch.ones_like(y)
        check(f"expert bias {experts} x {per}", lambda: apply_bias(t, biases, probs, rows),
              lambda: torch.autograd.grad(y, [t, probs, *biases], grad, retain_graph=True),
              (28 * n, 2 * experts + 2), (40 * n, 5 * experts + 2), copy_bps)
        x = torch.randn(experts * per, 2 * HIDDEN, dtype=torch.bfloat16, device="cuda", requires_grad=True)
        z = clamp_cat(x)
        gz = torch.ones_like(z)
        check(f"GLU clamp {experts} x {per}", lambda: clamp_cat(x), lambda: torch.autograd.grad(z, [x], gz, retain_graph=True),
              (8 * n * 2, 3), (10 * n * 2, 3), copy_bps)
    return 0


if __name__ == "__main__":
    sys.exit(main())
