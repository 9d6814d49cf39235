#!/usr/bin/env python3
"""Measures fused (flash) attention, forward and backward, on the GPU it runs on, and appends the
rows to a kernel table (format in kernels_profile/README.md) as kernels `flash_attention_fwd` and
`flash_attention_bwd` (full attention) and `flash_attention_causal_fwd` / `_bwd` (causal mask),
with batch = micro-batch x heads, m = n = sequence length, k = head dim.

The kernel is PyTorch's scaled_dot_product_attention restricted to its FLASH_ATTENTION backend
(FlashAttention-2 kernels shipped inside PyTorch), the kernel PyTorch training uses on this GPU.
The ratio of causal to full time is printed next to the fraction hetsim assumes where it has no
causal rows ((n+1)/2n of the 128 x 128 tiles), and, after the rows are filed, the ratio of a
sliding window's time to causal attention's (flex_attention with a block mask) next to the tiles
hetsim assumes the window computes.

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


def tile_share(s, window):
    """hetsim's flash_tile_share (workloads/attention_ops.cpp): of the n x n tiles of 128, those a
    causal kernel computes, or under a sliding window of `window` keys those the band reaches."""
    n = max(1, math.ceil(s / 128))
    if window <= 0 or window >= s:
        return (n + 1) / (2 * n)
    k, c = min(n - 1, (window - 1) // 128), math.ceil((window - 1) / 128)
    return ((k + 1) * (k + 2) // 2 + (n - 1 - k) * (c + 1)) / (n * n)


def window_ratios(dtype, quick):
    """Sliding-window attention against causal attention, both by flex_attention with a block mask
    (blocks of 128 that the mask leaves empty are skipped), forward and backward: the ratio of the
    two times beside the ratio of tiles hetsim assumes (a model's sliding_window:, GPT-OSS's 128
    tokens). Printed, not filed: the kernel tables hold no windowed kernel."""
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention
    attend = torch.compile(flex_attention)
    for s in [4096]:
        for window in [128] if quick else [128, 1024]:
            bh, d = 64, 64
            q, k, v = (torch.randn(1, bh, s, d, device="cuda", dtype=dtype, requires_grad=True) for _ in range(3))
            times = []
            for band in (0, window):
                def mask(b, h, qi, ki, band=band):
                    return (qi >= ki) & ((qi - ki < band) if band else (qi >= 0))
                block = create_block_mask(mask, B=None, H=None, Q_LEN=s, KV_LEN=s, device="cuda")
                fwd = median_seconds(lambda: attend(q, k, v, block_mask=block))
                o = attend(q, k, v, block_mask=block)
                g = torch.randn_like(o)
                bwd = median_seconds(lambda: torch.autograd.grad(o, (q, k, v), g, retain_graph=True))
                times.append((fwd, bwd))
            (cf, cb), (wf, wb) = times
            print(f"window {window} at s={s} bh={bh} d={d}: window/causal fwd {wf / cf:.3f} bwd {wb / cb:.3f} "
                  f"(hetsim assumes {tile_share(s, window) / tile_share(s, 0):.3f}; flex_attention, "
                  f"causal fwd {cf * 1e3:.3f} ms bwd {cb * 1e3:.3f} ms)", flush=True)


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
    try:  # after the rows are filed: a PyTorch without flex_attention loses only this check
        window_ratios(DTYPES["bf16"], a.quick)
    except Exception as e:  # noqa: BLE001 (any failure of the optional check is reported, not fatal)
        print(f"flash_attention.py: sliding-window check not run: {e}", flush=True)


if __name__ == "__main__":
    main()
