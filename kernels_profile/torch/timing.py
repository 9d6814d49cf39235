"""Shared by the PyTorch measurement programs: CUDA-event timing (median after warm-up), the GPU's
identity for provenance columns, and appending rows to a CSV that gets its header once.

Same conventions as kernels_profile/cuda/bench_util.cuh: 5 warm-up runs, median of 20 timed
samples, each sample k launches back to back between CUDA events, divided by k (the GPU never
waits for the host to launch, as in a training step's stream), k = enough for 1 ms, 1 to 10; identity = GPU name, CUDA driver version, maximum SM clock, UTC date.

Every median is a `Seconds`: a float that also carries `mhz`, the median SM clock NVML read while
its timed samples ran (read once per sample, after its work is queued and before the GPU finishes
it; 0 without NVML). Under a 700 W cap an H100 or H200 ran GEMMs between about 1200 and 1980 MHz
depending on what ran just before (kernels_profile/measured/sustained), so a time is stated with
the clock it ran at.
"""
import csv
import datetime
import os
import statistics

import torch

WARMUP = 5
TIMED = 20
BACK_TO_BACK = 10


class Seconds(float):
    """A median time in seconds with `mhz`, the median SM clock while it was measured (0: unknown)."""

    def __new__(cls, seconds, mhz=0.0):
        self = super().__new__(cls, seconds)
        self.mhz = float(mhz)
        return self


_NVML = {}  # lib, handle and why NVML is missing, once per process (nvml())


def nvml():
    """(pynvml, the handle of device 0), NVML initialised once per process; (None, None) where NVML
    is missing (_NVML["why"] says why)."""
    if not _NVML:
        try:
            import pynvml

            pynvml.nvmlInit()
            _NVML.update(lib=pynvml, handle=pynvml.nvmlDeviceGetHandleByIndex(0), why="")
        except Exception as e:  # noqa: BLE001 - clocks and versions are context; say they are missing
            _NVML.update(lib=None, handle=None, why=type(e).__name__)
    return _NVML["lib"], _NVML["handle"]


def sm_clock_mhz():
    """The SM clock now, in MHz, through NVML; 0 where NVML is missing."""
    lib, handle = nvml()
    if lib is None:
        return 0.0
    try:
        return float(lib.nvmlDeviceGetClockInfo(handle, lib.NVML_CLOCK_SM))
    except Exception:  # noqa: BLE001
        return 0.0


def _event_seconds(run, clocks=None):
    """GPU seconds of run() on the current stream, between two CUDA events; appends the SM clock read
    while run()'s work executes to `clocks` when given."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    run()
    end.record()
    if clocks is not None:  # after the end is queued: the NVML call's own time is never timed
        clocks.append(sm_clock_mhz())
    end.synchronize()
    return start.elapsed_time(end) * 1e-3


def _calls_for_a_millisecond(fn, at_most, floor_ms):
    """How many fn() back to back take about 1 ms (from one timed call), 1 to at_most."""
    return max(1, min(at_most, int(1.0 / max(_event_seconds(fn) * 1e3, floor_ms)) + 1))


def _median_per_call(run, k, timed):
    """Median over `timed` samples of run()'s time divided by the k calls it makes, with the median clock."""
    clocks = []
    seconds = statistics.median(_event_seconds(run, clocks) / k for _ in range(timed))
    return Seconds(seconds, statistics.median(clocks))


def median_seconds(fn, warmup=WARMUP, timed=TIMED, back_to_back=BACK_TO_BACK):
    """Median GPU time of one fn() on the current CUDA stream, in seconds."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    k = _calls_for_a_millisecond(fn, back_to_back, 1e-4)

    def calls():
        for _ in range(k):
            fn()

    return _median_per_call(calls, k, timed)


def graph_median_seconds(fn, warmup=2, timed=7):
    """Median GPU time of one fn(), replayed from a CUDA graph of k back-to-back calls: PyTorch's host
    dispatch (tens of microseconds on a slow host) cannot stretch a short kernel, as it can when
    median_seconds launches eagerly. k = enough calls for about 1 ms, 1 to 20. Falls back to
    median_seconds where fn cannot be captured."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(max(1, warmup)):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    k = _calls_for_a_millisecond(fn, 20, 1e-3)
    try:
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for _ in range(k):
                fn()
    except Exception:  # noqa: BLE001 - not capturable: eager launches
        torch.cuda.synchronize()
        return median_seconds(fn, warmup=warmup, timed=timed)
    graph.replay()
    return _median_per_call(graph.replay, k, timed)


def identity():
    """(gpu name, driver, max SM clock in MHz, UTC date) of device 0."""
    name = torch.cuda.get_device_name(0)
    driver, clock = "", 0
    lib, handle = nvml()
    why = _NVML["why"]
    if lib is not None:
        try:
            v = lib.nvmlSystemGetCudaDriverVersion()
            driver = f"CUDA driver {v // 1000}.{(v % 1000) // 10}"
            clock = lib.nvmlDeviceGetMaxClockInfo(handle, lib.NVML_CLOCK_SM)
        except Exception as e:  # noqa: BLE001 - provenance only; say what is missing
            why = type(e).__name__
    if why:
        driver = f"CUDA runtime {torch.version.cuda} (driver unknown: {why})"
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return name, driver, clock, date


def library():
    """PyTorch and cuBLAS versions, for the provenance column `library`."""
    text = f"torch {torch.__version__} CUDA {torch.version.cuda}"
    try:  # cuBLAS as loaded by this PyTorch (cublasGetVersion_v2 of the process's libcublas)
        import ctypes

        torch.mm(torch.ones(16, 16, device="cuda"), torch.ones(16, 16, device="cuda"))  # loads cuBLAS
        v = ctypes.c_int()
        for name in ("libcublas.so.13", "libcublas.so.12", "libcublas.so"):
            try:
                lib = ctypes.CDLL(name, mode=os.RTLD_NOLOAD | ctypes.RTLD_GLOBAL)
            except OSError:
                continue
            if lib.cublasGetProperty(0, ctypes.byref(v)) == 0:
                major = v.value
                lib.cublasGetProperty(1, ctypes.byref(v))
                minor = v.value
                lib.cublasGetProperty(2, ctypes.byref(v))
                text += f" cuBLAS {major}.{minor}.{v.value}"
                break
    except Exception:  # noqa: BLE001 - provenance only
        pass
    return text


def append_rows(path, header, rows):
    """Appends rows to path, writing header first when the file is new or empty."""
    fresh = not os.path.exists(path) or os.path.getsize(path) == 0
    with open(path, "a", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        if fresh:
            w.writerow(header)
        w.writerows(rows)


DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16}
