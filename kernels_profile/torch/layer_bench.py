#!/usr/bin/env python3
"""Times one GPT transformer layer, forward and backward, in PyTorch with fused (flash) causal
attention, and appends one row to a layer CSV that `hetsim validate --layers FILE` compares with
hetsim's prediction for the same layer on the fused path (column attention = flash).

The layer is the one hetsim's operator graph builds for family gpt without dropout: pre-norm
LayerNorm, QKV projection (with bias), causal flash attention (SDPA, FLASH_ATTENTION backend),
output projection, residual add, LayerNorm, MLP up, GELU, MLP down, residual add. Backward is
torch.autograd.grad over the input and every weight (what a training step computes).

Both are replayed from CUDA graphs (forward alone, and forward + backward; backward = the
difference), so the times are the GPU's: PyTorch's host-side dispatch, which can exceed the GPU
work of a small layer, is not counted (hetsim models GPU time; a CPU-bound eager loop is a
different question).

Usage: layer_bench.py --device H100-SXM5-80GB --out layers.csv --hidden 4096 --heads 32 --ffn 16384
                      --seq 2048 --micro-batch 1 --dtype bf16
"""
import argparse
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from timing import DTYPES, append_rows, identity, median_seconds

HEADER = ["device", "hidden", "heads", "ffn_hidden", "seq_len", "micro_batch", "dtype", "fwd_s", "bwd_s", "gpu",
          "driver", "clock_mhz", "date", "attention"]


def layer(x, w, heads):
    b, s, h = x.shape
    y = F.layer_norm(x, (h,), w["ln1_g"], w["ln1_b"])
    qkv = F.linear(y, w["qkv_w"], w["qkv_b"]).view(b, s, 3, heads, h // heads).permute(2, 0, 3, 1, 4)
    ctx = F.scaled_dot_product_attention(qkv[0], qkv[1], qkv[2], is_causal=True)
    ctx = ctx.transpose(1, 2).reshape(b, s, h)
    r1 = x + F.linear(ctx, w["o_w"], w["o_b"])
    y = F.layer_norm(r1, (h,), w["ln2_g"], w["ln2_b"])
    return r1 + F.linear(F.gelu(F.linear(y, w["up_w"], w["up_b"])), w["down_w"], w["down_b"])


def graphed(fn):
    """fn captured in a CUDA graph, after warm-up on a side stream (PyTorch's capture recipe)."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    return graph


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--hidden", type=int, default=4096)
    ap.add_argument("--heads", type=int, default=32)
    ap.add_argument("--ffn", type=int, default=0, help="default 4 x hidden")
    ap.add_argument("--seq", type=int, default=2048)
    ap.add_argument("--micro-batch", type=int, default=1)
    ap.add_argument("--dtype", choices=sorted(DTYPES), default="bf16")
    a = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("layer_bench.py: no CUDA GPU")
    h, f, dt = a.hidden, a.ffn or 4 * a.hidden, DTYPES[a.dtype]
    if h % a.heads:
        sys.exit(f"layer_bench.py: hidden {h} is not divisible by heads {a.heads}")
    shapes = {"ln1_g": (h,), "ln1_b": (h,), "qkv_w": (3 * h, h), "qkv_b": (3 * h,), "o_w": (h, h), "o_b": (h,),
              "ln2_g": (h,), "ln2_b": (h,), "up_w": (f, h), "up_b": (f,), "down_w": (h, f), "down_b": (h,)}
    w = {k: (0.02 * torch.randn(*v, device="cuda", dtype=dt)).requires_grad_() for k, v in shapes.items()}
    x = torch.randn(a.micro_batch, a.seq, h, device="cuda", dtype=dt, requires_grad=True)
    inputs = [x] + list(w.values())
    g = torch.randn(a.micro_batch, a.seq, h, device="cuda", dtype=dt)
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        forward = graphed(lambda: layer(x, w, a.heads))
        step = graphed(lambda: torch.autograd.grad(layer(x, w, a.heads), inputs, g))
        fwd = median_seconds(forward.replay)
        bwd = median_seconds(step.replay) - fwd
    gpu, driver, clock, date = identity()
    append_rows(a.out, HEADER, [[a.device, h, a.heads, f, a.seq, a.micro_batch, a.dtype, f"{fwd:.9g}", f"{bwd:.9g}", gpu,
                                 driver, clock, date, "flash"]])
    print(f"layer h={h} heads={a.heads} s={a.seq} b={a.micro_batch} {a.dtype} (flash): forward {fwd * 1e3:.3f} ms, "
          f"backward {bwd * 1e3:.3f} ms")


if __name__ == "__main__":
    main()
