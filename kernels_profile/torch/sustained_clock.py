#!/usr/bin/env python3
"""A GEMM's time in a burst (after the GPU idled) and sustained (back to back for seconds, as in a
training step's long compute phases), with the SM clock, power draw and clock-event reasons read
through NVML while it runs. Under sustained tensor-core load a 700 W H100/H200 reaches its power
limit and lowers its SM clock; kernel tables timed in short bursts then run faster than a training
step does. One row per (dtype, shape) to --out:

    device,dtype,m,n,k,burst_s,sustained_s,ratio,burst_clock_mhz,sustained_clock_mhz,sustained_power_w,
    reasons,gpu,driver,clock_mhz,date

ratio = sustained_s / burst_s; reasons = the NVML clock-event bits seen while sustained (0x4: the
software power cap). A device copy (memory-bound) is measured the same way for contrast (dtype
`copy`, m = bytes).

Usage: sustained_clock.py --device H200-SXM-141GB --out sustained.csv [--seconds 4] [--shape M,N,K ...]
"""
import argparse
import statistics
import sys
import time

import torch

from timing import append_rows, identity, nvml

HEADER = ["device", "dtype", "m", "n", "k", "burst_s", "sustained_s", "ratio", "burst_clock_mhz", "sustained_clock_mhz",
          "sustained_power_w", "reasons", "gpu", "driver", "clock_mhz", "date"]
SHAPES = [(8192, 8192, 8192), (16384, 4096, 16384), (4096, 12288, 4096)]


def read(lib, handle):
    """(SM clock MHz, power W, clock-event reason bits), or zeros without NVML."""
    if lib is None:
        return 0, 0.0, 0
    reasons = 0
    for f in ("nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"):
        if hasattr(lib, f):
            reasons = getattr(lib, f)(handle)
            break
    return (lib.nvmlDeviceGetClockInfo(handle, lib.NVML_CLOCK_SM), lib.nvmlDeviceGetPowerUsage(handle) / 1e3,
            reasons)


def chunk_seconds(fn, calls):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(calls):
        fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) * 1e-3 / calls


def measure(fn, seconds, lib, handle):
    """(burst s, sustained s, burst clock, sustained clock, sustained power, reasons) of one fn()."""
    fn()
    torch.cuda.synchronize()
    time.sleep(1.0)  # idle: the clock and the power budget recover
    burst = chunk_seconds(fn, 3)
    burst_clock = read(lib, handle)[0]
    calls = max(1, int(0.05 / burst))  # chunks of about 50 ms
    samples, clocks, powers, reasons = [], [], [], 0
    t0 = time.monotonic()
    while time.monotonic() - t0 < seconds:
        s = chunk_seconds(fn, calls)
        if time.monotonic() - t0 > seconds / 2:  # the second half: settled
            c, p, r = read(lib, handle)
            samples.append(s)
            clocks.append(c)
            powers.append(p)
            reasons |= r
    return burst, statistics.median(samples), burst_clock, statistics.median(clocks), statistics.median(powers), reasons


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--shape", action="append", default=[], help="M,N,K instead of the default shapes (repeatable)")
    a = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("sustained_clock.py: no CUDA GPU")
    lib, handle = nvml()
    gpu, driver, clock, date = identity()
    cases = []
    shapes = [tuple(int(v) for v in spec.split(",")) for spec in a.shape] or SHAPES
    for m, n, k in shapes:
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
        cases.append(("bf16", m, n, k, lambda x=x, w=w: torch.nn.functional.linear(x, w)))
        e4m3 = getattr(torch, "float8_e4m3fn", None)
        if e4m3 is not None and torch.cuda.get_device_capability() >= (8, 9):
            xq, wq, one = x.to(e4m3), w.to(e4m3), torch.ones((), device="cuda")
            cases.append(("fp8", m, n, k, lambda xq=xq, wq=wq, one=one: torch._scaled_mm(
                xq, wq.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16, use_fast_accum=True)))
    src = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    cases.append(("copy", 1 << 30, 0, 0, lambda: dst.copy_(src)))
    rows = []
    for dtype, m, n, k, fn in cases:
        burst, sustained, bc, sc, sp, reasons = measure(fn, a.seconds, lib, handle)
        ratio = sustained / burst
        rows.append([a.device, dtype, m, n, k, f"{burst:.9g}", f"{sustained:.9g}", f"{ratio:.4f}", bc, sc, f"{sp:.0f}",
                     hex(reasons), gpu, driver, clock, date])
        print(f"{dtype:5} {m:6}x{n:6}x{k:6}: burst {burst * 1e3:8.3f} ms at {bc} MHz, sustained {sustained * 1e3:8.3f} ms "
              f"at {sc} MHz, {sp:.0f} W (x{ratio:.3f}, reasons {hex(reasons)})", flush=True)
    append_rows(a.out, HEADER, rows)


if __name__ == "__main__":
    main()
