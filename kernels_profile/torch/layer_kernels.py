#!/usr/bin/env python3
"""Where a transformer layer's time goes, kernel by kernel: runs layer_bench.py's layer (same
operators, same flash attention, same FP8 casts) forward and backward under PyTorch's profiler and
appends, per pass, one row per GPU kernel name with its calls and GPU seconds per layer pass
(column timing: eager, or graphs with --from-graphs).

`hetsim validate --layer-kernels FILE` compares these rows with the operators hetsim costs for the
same layer, so a layer's error can be traced to the kernels that make it (a GEMM layout, a cast,
a kernel hetsim does not count).

Each pass runs eagerly (the profiler sees kernels, not a CUDA graph's replay) and the GPU is
synchronised at the end of the forward, so each kernel belongs to the pass whose annotation
encloses it. Kernel durations are the GPU's (CUPTI); the gaps eager launching leaves between them
are not counted, as layer_bench.py's CUDA graphs do not count them either. The rows' sum per pass
is printed beside layer_bench.py's graph-replay time of the same layer.

Usage: layer_kernels.py --device H200-SXM-141GB --out layer-kernels.csv --dtype bf16 \\
           --layer 4096,32,16384,2048,1 [--layer HIDDEN,HEADS,FFN,SEQ,MICRO_BATCH ...]
"""
import argparse
import gzip
import json
import os
import sys
import tempfile

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.profiler import ProfilerActivity, profile, record_function

from layer_bench import build, graphed, layer
from timing import DTYPES, append_rows, identity, median_seconds

HEADER = ["device", "hidden", "heads", "ffn_hidden", "seq_len", "micro_batch", "dtype", "pass", "kernel", "calls",
          "seconds", "gpu", "driver", "clock_mhz", "date", "attention", "timing"]
ITERATIONS = 5
GPU_CATEGORIES = ("kernel", "gpu_memcpy", "gpu_memset")


def clean(name):
    """A kernel name as one plain CSV field: no commas or quotes, at most 240 characters."""
    return name.replace(",", ";").replace('"', "").replace("\n", " ")[:240]


def trace_events(prof):
    """The profiler's Chrome-trace events (the format every PyTorch version exports)."""
    fd, path = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    try:
        prof.export_chrome_trace(path)
        opener = gzip.open if open(path, "rb").read(2) == b"\x1f\x8b" else open
        with opener(path, "rt") as f:
            data = json.load(f)
    finally:
        os.unlink(path)
    return data["traceEvents"] if isinstance(data, dict) else data


def kernels_per_pass(x, w, inputs, g, heads):
    """{pass: {kernel name: [calls, seconds]}} per layer pass, mean over ITERATIONS."""
    for _ in range(3):
        torch.autograd.grad(layer(x, w, heads), inputs, g)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(ITERATIONS):
            with record_function("hetsim_fwd"):
                y = layer(x, w, heads)
                torch.cuda.synchronize()
            with record_function("hetsim_bwd"):
                torch.autograd.grad(y, inputs, g)
                torch.cuda.synchronize()
    events = trace_events(prof)
    ranges = [(e["name"][len("hetsim_"):], float(e["ts"]), float(e["ts"]) + float(e.get("dur", 0)))
              for e in events if e.get("ph") == "X" and e.get("name") in ("hetsim_fwd", "hetsim_bwd")
              and e.get("cat") in ("user_annotation", "cpu_op")]
    out = {"fwd": {}, "bwd": {}}
    unplaced = 0.0
    for e in events:
        if e.get("ph") != "X" or e.get("cat") not in GPU_CATEGORIES:
            continue
        ts, dur = float(e["ts"]), float(e.get("dur", 0))
        where = [p for p, lo, hi in ranges if lo <= ts <= hi]
        if not where:
            unplaced += dur
            continue
        row = out[where[0]].setdefault(clean(e["name"]), [0, 0.0])
        row[0] += 1
        row[1] += dur * 1e-6
    if unplaced > 0:
        print(f"layer_kernels.py: {unplaced:.1f} us of kernels outside both passes (not counted)", flush=True)
    for per_pass in out.values():
        for row in per_pass.values():
            row[0] /= ITERATIONS
            row[1] /= ITERATIONS
    return out


def kernels_in_replays(graph):
    """({kernel name: [calls, seconds]}, span seconds) per replay of a CUDA graph, mean over
    ITERATIONS; span = a replay's first kernel's start to its last kernel's end (kernels plus the
    gaps between them)."""
    graph.replay()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(ITERATIONS):
            graph.replay()
            torch.cuda.synchronize()
    kernels = sorted((float(e["ts"]), float(e.get("dur", 0)), clean(e["name"])) for e in trace_events(prof)
                     if e.get("ph") == "X" and e.get("cat") in GPU_CATEGORIES)
    out = {}
    for _, dur, name in kernels:
        row = out.setdefault(name, [0, 0.0])
        row[0] += 1.0 / ITERATIONS
        row[1] += dur * 1e-6 / ITERATIONS
    n = len(kernels) // ITERATIONS  # each replay runs the same kernels, in order
    chunks = [kernels[i * n:(i + 1) * n] for i in range(ITERATIONS)] if n else []
    span = sum(max(t + d for t, d, _ in c) - c[0][0] for c in chunks) * 1e-6 / ITERATIONS
    return out, span


def kernels_per_pass_in_graphs(x, w, inputs, g, heads):
    """As kernels_per_pass, from CUDA-graph replays (backward = step's kernels less forward's), and
    the spans of one forward replay and one forward + backward replay (kernels_in_replays)."""
    forward = graphed(lambda: layer(x, w, heads))
    step = graphed(lambda: torch.autograd.grad(layer(x, w, heads), inputs, g))
    fwd, fwd_span = kernels_in_replays(forward)
    both, step_span = kernels_in_replays(step)
    bwd = {}
    for name, (calls, seconds) in both.items():
        c, s = fwd.get(name, [0, 0.0])
        if calls - c > 1e-9:
            bwd[name] = [calls - c, seconds - s]
    return {"fwd": fwd, "bwd": bwd}, fwd_span, step_span


def graph_times(x, w, inputs, g, heads):
    """layer_bench.py's forward and backward times (CUDA graph replays), for the printed comparison."""
    forward = graphed(lambda: layer(x, w, heads))
    step = graphed(lambda: torch.autograd.grad(layer(x, w, heads), inputs, g))
    fwd = median_seconds(forward.replay)
    return fwd, median_seconds(step.replay) - fwd


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--dtype", choices=sorted(DTYPES) + ["fp8"], default="bf16")
    ap.add_argument("--from-graphs", action="store_true", help="kernels as CUDA-graph replays run them")
    ap.add_argument("--layer", action="append", required=True, help="HIDDEN,HEADS,FFN,SEQ,MICRO_BATCH (repeatable)")
    a = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("layer_kernels.py: no CUDA GPU")
    gpu, driver, clock, date = identity()
    for spec in a.layer:
        try:
            h, heads, ffn, seq, mb = (int(v) for v in spec.split(","))
        except ValueError:
            sys.exit(f"layer_kernels.py: --layer {spec}: want HIDDEN,HEADS,FFN,SEQ,MICRO_BATCH")
        x, w, inputs, attention = build(h, heads, ffn, seq, mb, a.dtype)
        g = torch.randn_like(x, requires_grad=False)
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            if a.from_graphs:
                passes, fwd_span, step_span = kernels_per_pass_in_graphs(x, w, inputs, g, heads)
                print(f"  graph replays, first kernel's start to last kernel's end: forward {fwd_span * 1e3:.3f} ms, "
                      f"forward + backward {step_span * 1e3:.3f} ms", flush=True)
            else:
                passes = kernels_per_pass(x, w, inputs, g, heads)
            fwd, bwd = graph_times(x, w, inputs, g, heads)
        timing = "graphs" if a.from_graphs else "eager"
        rows = []
        for p, kernels in passes.items():
            for name, (calls, seconds) in sorted(kernels.items(), key=lambda kv: -kv[1][1]):
                rows.append([a.device, h, heads, ffn, seq, mb, a.dtype, p, name, f"{calls:g}", f"{seconds:.9g}", gpu,
                             driver, clock, date, attention, timing])
        append_rows(a.out, HEADER, rows)
        total = {p: sum(s for _, s in k.values()) for p, k in passes.items()}
        print(f"layer h={h} heads={heads} ffn={ffn} s={seq} b={mb} {a.dtype} ({attention}): kernels forward "
              f"{total['fwd'] * 1e3:.3f} ms (graph {fwd * 1e3:.3f} ms), backward {total['bwd'] * 1e3:.3f} ms "
              f"(graph {bwd * 1e3:.3f} ms)", flush=True)
        for p, kernels in passes.items():
            for name, (calls, seconds) in sorted(kernels.items(), key=lambda kv: -kv[1][1])[:12]:
                print(f"  {p} {seconds * 1e6:9.1f} us x{calls:g} {name[:110]}", flush=True)
        del x, w, inputs, g
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
