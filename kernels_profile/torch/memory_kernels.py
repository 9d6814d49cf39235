#!/usr/bin/env python3
"""Measures PyTorch's memory-bound kernels, the ones a PyTorch or Megatron layer runs between its
GEMMs, and appends them to a kernel table (format in kernels_profile/README.md) with the
`library` column, which makes them supersede hetsim-kernels' own (simpler, slower) kernels of the
same name on that device:

  layernorm_fwd / _bwd   torch.nn.functional.layer_norm over the last dimension (weight, bias)
  gelu_fwd / _bwd        torch.nn.functional.gelu (tanh=none), the elementwise stand-in
  softmax_fwd / _bwd     torch.softmax over the last dimension
  copy                   Tensor.copy_ between two buffers
  fp8_cast               (bf16 only, where the GPU has FP8) an FP8 GEMM input's cast with per-tensor
                         current scaling, as torch/layer_bench.py runs it: amax, then the E4M3 cast and
                         its transposed copy (torch.compile's fused kernels where it works, else eager);
                         bytes as hetsim counts them for recipe fp8-current: read the tensor twice (amax,
                         cast), write two 1-byte copies

`bytes` counts as hetsim's operator graph does: forward 2 x the tensor (layernorm plus its
parameters), backward 3 x (layernorm plus twice its parameters), copy 2 x. Kernels are timed from
CUDA graphs (the host's dispatch cannot stretch them), each sample on a buffer of its own size.

Usage: memory_kernels.py --device H100-SXM5-80GB --out kernels_profile/measured/h100-framework.csv [--quick]
"""
import argparse
import sys

import torch
import torch.nn.functional as F

from layer_bench import CAST, E4M3, use_compiled_casts
from timing import DTYPES, append_rows, graph_median_seconds, identity, library

FP8 = False  # set in main: float8 in this PyTorch and an sm_89+ GPU

HEADER = ["device", "kernel", "dtype", "batch", "m", "n", "k", "bytes", "seconds", "gpu", "driver", "clock_mhz", "date",
          "library", "sm_clock_mhz"]


def measure(rows_count, width, dtype):
    """{kernel: (bytes, seconds)} for a [rows_count, width] tensor."""
    e = torch.finfo(dtype).bits // 8
    t = rows_count * width * e
    p = 2 * width * e  # layernorm weight and bias
    x = torch.randn(rows_count, width, device="cuda", dtype=dtype, requires_grad=True)
    g = torch.ones(width, device="cuda", dtype=dtype, requires_grad=True)
    b = torch.zeros(width, device="cuda", dtype=dtype, requires_grad=True)
    dy = torch.randn(rows_count, width, device="cuda", dtype=dtype)
    out = {}
    out["layernorm_fwd"] = (2 * t + p, graph_median_seconds(lambda: F.layer_norm(x, (width,), g, b)))
    y = F.layer_norm(x, (width,), g, b)
    out["layernorm_bwd"] = (3 * t + 2 * p, graph_median_seconds(lambda: torch.autograd.grad(y, (x, g, b), dy, retain_graph=True)))
    out["gelu_fwd"] = (2 * t, graph_median_seconds(lambda: F.gelu(x)))
    y = F.gelu(x)
    out["gelu_bwd"] = (3 * t, graph_median_seconds(lambda: torch.autograd.grad(y, (x,), dy, retain_graph=True)))
    out["softmax_fwd"] = (2 * t, graph_median_seconds(lambda: torch.softmax(x, dim=-1)))
    y = torch.softmax(x, dim=-1)
    out["softmax_bwd"] = (3 * t, graph_median_seconds(lambda: torch.autograd.grad(y, (x,), dy, retain_graph=True)))
    dst = torch.empty_like(dy)
    out["copy"] = (2 * t, graph_median_seconds(lambda: dst.copy_(dy)))
    if dtype == torch.bfloat16 and FP8:
        xd = x.detach()
        elements = rows_count * width
        out["fp8_cast"] = (elements * (2 * e + 2), graph_median_seconds(lambda: CAST["fn"](xd)))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", required=True, help="hetsim device name the rows are filed under")
    ap.add_argument("--out", required=True, help="kernel table CSV to append to")
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("memory_kernels.py: no CUDA GPU")
    gpu, driver, clock, date = identity()
    lib = library()
    print(f"memory_kernels.py: {gpu}, {driver}, {clock} MHz, {lib}, {date}", flush=True)
    global FP8
    FP8 = E4M3 is not None and torch.cuda.get_device_capability() >= (8, 9)
    if FP8:
        use_compiled_casts(torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16))
        print(f"memory_kernels.py: fp8 casts {CAST['kind']}", flush=True)
    measure(256, 1024, torch.float32)  # warm-up: a process's first autograd backward took 20x longer (2026-11-27)
    # Widths of the shipped models (hidden, and an MLP's 4 x hidden), 256 to 65536 rows: tensors of
    # 0.5 MB to 1 GB.
    shapes = [(r, w) for w in ([4096] if a.quick else [1024, 4096, 16384]) for r in
              ([2048] if a.quick else [256, 1024, 2048, 4096, 8192, 16384, 32768]) if r * w <= 2 ** 29]
    for name, dtype in DTYPES.items():
        emitted = set()  # (kernel, bytes): one row per key and run (another width of the same size is skipped)
        for rows_count, width in shapes:
            try:
                got = measure(rows_count, width, dtype)
            except Exception as e:  # noqa: BLE001 - keep the other shapes
                print(f"memory_kernels.py: {name} {rows_count}x{width} not measured: {type(e).__name__}: {str(e)[:200]}")
                continue
            fresh = {k: v for k, v in got.items() if (k, int(v[0])) not in emitted}
            emitted.update((k, int(v[0])) for k, v in fresh.items())
            append_rows(a.out, HEADER, [[a.device, k, name, "", "", "", "", int(nbytes), f"{sec:.9g}", gpu, driver, clock,
                                         date, lib, f"{sec.mhz:.0f}"] for k, (nbytes, sec) in fresh.items()])
            print(f"{name} {rows_count:6d}x{width:6d}: " + " ".join(
                f"{k} {sec * 1e6:.1f} us ({nbytes / sec / 1e9:.0f} GB/s)" for k, (nbytes, sec) in got.items()), flush=True)
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
