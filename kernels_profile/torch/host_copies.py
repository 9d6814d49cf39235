#!/usr/bin/env python3
"""Measures what copies between GPU memory and pinned host memory reach, as Transformer Engine's CPU
offloading of activations runs them (tensor.copy_(..., non_blocking=True) on a stream of their own), for
the device files' `host_link` block (docs/formats/device.md): each direction alone, and each beside a
bf16 GEMM on the compute stream (the copies of offloading run under the layers' compute; the GEMM's
slowdown is recorded too). One row per (direction, bytes, beside):

  direction  to_host (device to pinned host memory) or from_host
  bytes      bytes per copy (64 MiB to 1 GiB)
  beside     none, or gemm (a 8192 x 8192 x 8192 bf16 GEMM running on the compute stream meanwhile)
  seconds    median time of one copy (5 warm-up, median of 9: CUDA events on the copy stream)
  gb_per_s   bytes / seconds / 1e9
  gemm_slowdown  beside gemm: the GEMM's median time with the copy over its time alone (else empty)

Usage: host_copies.py --device H100-SXM5-80GB --out kernels_profile/measured/host/h100.csv [--quick]
"""
import argparse
import statistics

import torch

from timing import append_rows, identity, library

HEADER = ["device", "direction", "bytes", "beside", "seconds", "gb_per_s", "gemm_slowdown", "gpu", "driver", "clock_mhz",
          "date", "library"]
WARMUP, TIMED = 5, 9


def timed(fn, stream):
    """Median seconds of fn() enqueued on `stream`, between CUDA events there."""
    out = []
    for i in range(WARMUP + TIMED):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        with torch.cuda.stream(stream):
            start.record(stream)
            fn()
            end.record(stream)
        end.synchronize()
        if i >= WARMUP:
            out.append(start.elapsed_time(end) / 1e3)
    return statistics.median(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", required=True, help="hetsim's device name (kernels_profile/devices/NAME.yaml)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    gpu, driver, clock, date = identity()
    lib = library()
    copy_stream, compute = torch.cuda.Stream(), torch.cuda.current_stream()
    n = 8192
    x = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    y = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    gemm_alone = timed(lambda: torch.mm(x, y), compute)
    rows = []
    sizes = [256 << 20] if a.quick else [64 << 20, 256 << 20, 1 << 30]
    for size in sizes:
        dev = torch.empty(size, dtype=torch.uint8, device="cuda")
        host = torch.empty(size, dtype=torch.uint8, pin_memory=True)
        for direction in ("to_host", "from_host"):
            copy = (lambda: host.copy_(dev, non_blocking=True)) if direction == "to_host" else (lambda: dev.copy_(host, non_blocking=True))
            alone = timed(copy, copy_stream)
            rows.append([a.device, direction, size, "none", f"{alone:.6e}", f"{size / alone / 1e9:.2f}", "", gpu, driver, clock,
                         date, lib])
            # Beside a GEMM: enough GEMMs queued on the compute stream to cover the copy, then the copy.
            reps = max(1, int(alone / gemm_alone) + 2)
            copies, gemms = [], []
            for i in range(WARMUP + TIMED):
                gs, ge = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                cs, ce = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                torch.cuda.synchronize()
                gs.record(compute)
                for _ in range(reps):
                    torch.mm(x, y)
                ge.record(compute)
                with torch.cuda.stream(copy_stream):
                    cs.record(copy_stream)
                    copy()
                    ce.record(copy_stream)
                torch.cuda.synchronize()
                if i >= WARMUP:
                    copies.append(cs.elapsed_time(ce) / 1e3)
                    gemms.append(gs.elapsed_time(ge) / 1e3 / reps)
            beside = statistics.median(copies)
            rows.append([a.device, direction, size, "gemm", f"{beside:.6e}", f"{size / beside / 1e9:.2f}",
                         f"{statistics.median(gemms) / gemm_alone:.4f}", gpu, driver, clock, date, lib])
            print(f"{direction} {size >> 20} MiB: {size / alone / 1e9:.1f} GB/s alone, {size / beside / 1e9:.1f} beside a GEMM "
                  f"(GEMM x{statistics.median(gemms) / gemm_alone:.3f})")
        del dev, host
    append_rows(a.out, HEADER, rows)


if __name__ == "__main__":
    main()
