#!/usr/bin/env python3
"""Measures fused (flash) attention, forward and backward, on the GPU it runs on, and appends the
rows to a kernel table (format in kernels_profile/README.md) as kernels `flash_attention_fwd` and
`flash_attention_bwd` (full attention) and `flash_attention_causal_fwd` / `_bwd` (causal mask),
with batch = micro-batch x heads, m = n = sequence length, k = head dim.

The kernel is PyTorch's scaled_dot_product_attention restricted to its FLASH_ATTENTION backend
(FlashAttention-2 kernels shipped inside PyTorch), the kernel PyTorch training uses on this GPU.
The ratio of causal to full time is printed next to the fraction hetsim assumes where it has no
causal rows ((n+1)/2n of the 128 x 128 tiles).

Usage: flash_attention.py --device H100-SXM5-80GB --out kernels_profile/measured/h100.csv [--quick]
"""
import argparse
import math
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from timing import DTYPES, append_rows, identity, median_seconds

HEADER = ["device", "kernel", "dtype", "batch", "m", "n", "k", "bytes", "seconds", "gpu", "driver", "clock_mhz", "date"]


def time_attention(bh, s, d, dtype, causal):
    q, k, v = (torch.randn(1, bh, s, d, device="cuda", dtype=dtype, requires_grad=True) for _ in range(3))
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        fwd = median_seconds(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal))
        o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        g = torch.randn_like(o)
        bwd = median_seconds(lambda: torch.autograd.grad(o, (q, k, v), g, retain_graph=True))
    return fwd, bwd


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", required=True, help="hetsim device name the rows are filed under")
    ap.add_argument("--out", required=True, help="kernel table CSV to append to")
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("flash_attention.py: no CUDA GPU")
    gpu, driver, clock, date = identity()
    print(f"flash_attention.py: {gpu}, {driver}, {clock} MHz, torch {torch.__version__}, {date}")
    rows = []
    for name, dtype in DTYPES.items():
        for bh in [32] if a.quick else [16, 32, 64, 128]:
            for s in [2048] if a.quick else [512, 1024, 2048, 4096, 8192]:
                for d in [64, 128]:
                    fwd, bwd = time_attention(bh, s, d, dtype, causal=False)
                    cf, cb = time_attention(bh, s, d, dtype, causal=True)
                    n = math.ceil(s / 128)
                    flops = 4.0 * bh * s * s * d
                    print(f"{name} bh={bh:4d} s={s:5d} d={d:3d}: fwd {fwd * 1e3:8.3f} ms ({flops / fwd / 1e12:6.1f} TFLOP/s) "
                          f"bwd {bwd * 1e3:8.3f} ms ({2.5 * flops / bwd / 1e12:6.1f} TFLOP/s); causal/full fwd {cf / fwd:.3f} "
                          f"bwd {cb / bwd:.3f} (hetsim assumes {(n + 1) / (2 * n):.3f})", flush=True)
                    for kernel, sec in (("flash_attention_fwd", fwd), ("flash_attention_bwd", bwd),
                                        ("flash_attention_causal_fwd", cf), ("flash_attention_causal_bwd", cb)):
                        rows.append([a.device, kernel, name, bh, s, s, d, "", f"{sec:.9g}", gpu, driver, clock, date])
    append_rows(a.out, HEADER, rows)


if __name__ == "__main__":
    main()
