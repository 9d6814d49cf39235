#!/usr/bin/env python3
"""Measures GEMMs as training frameworks run them, and appends the rows to a kernel table
(format in kernels_profile/README.md):

  gemm_fwd     y = x W^T + b   (torch.nn.functional.linear: cuBLAS "TN", bias fused in the epilogue)
  gemm_dgrad   dx = dy W       (cuBLAS "NN")
  gemm_wgrad   dW = dy^T x     (cuBLAS "NT")
  in bf16 and fp16, and in fp8 (E4M3 x E4M3 -> bf16, per-tensor scales, torch._scaled_mm, the
  cuBLASLt FP8 GEMM; Hopper's FP8 tensor cores take K-major operands only, so the operands are
  given in the transposed copies Transformer Engine keeps: the casts are not in these rows; the
  forward accumulates fast, the backward in split accumulators, as Transformer Engine's recipes do).
  grouped_gemm_fwd / _dgrad / _wgrad: a mixture-of-experts layer's expert GEMMs, one kernel over
  all local experts (torch._grouped_mm; fp8: torch._scaled_grouped_mm with row-wise scales).

Columns are those of every GEMM row, and sm_clock_mhz (the median SM clock while the row was
timed: timing.py): the product is batch x [m x k] . [k x n] with m, n the output
and k the reduction, so gemm_fwd has m = tokens, n = output features, k = input features;
gemm_dgrad m = tokens, n = input features, k = output features; gemm_wgrad m = output features,
n = input features, k = tokens. A grouped row has batch = local experts, m = the rows of all
experts together (forward, data gradient) or per expert (weight gradient: m, n per expert and
k = all rows). Rows reach experts unevenly, as a router's top-k produces them: top-k of Gaussian
logits for every token (seed 1234), each expert's rows padded to a multiple of 16 as grouped
kernels require (torchtitan does the same).

Shapes: the layers of the shipped models at tensor parallelism 1, 2, 4, 8 and 2048, 4096, 8192
tokens (bf16, fp8), userbuffers' GEMM chunks (tokens / tp rows) of the FP8 recipes' Llama models,
the layers `hetsim-layer-bench` measures (fp16), and the expert layers of the shipped MoE models at
expert parallelism 1 to 64 plus a grid over 8-256 experts and top-k 2-8.

Usage: framework_gemms.py --device H100-SXM5-80GB --out kernels_profile/measured/h100-framework.csv [--quick]
"""
import argparse
import sys

import torch
import torch.nn.functional as F

from timing import append_rows, graph_median_seconds, identity, library

HEADER = ["device", "kernel", "dtype", "batch", "m", "n", "k", "bytes", "seconds", "gpu", "driver", "clock_mhz", "date",
          "library", "sm_clock_mhz"]
E4M3 = getattr(torch, "float8_e4m3fn", None)

# name: hidden, ffn, heads, kv heads, gated MLP (SwiGLU: the up projection is 2 x ffn wide)
DENSE = {
    "bert-large": (1024, 4096, 16, 16, False),
    "gpt3-1.3b": (2048, 8192, 16, 16, False),
    "gpt3-2.7b": (2560, 10240, 32, 32, False),
    "gpt3-6.7b": (4096, 16384, 32, 32, False),
    "llama2-7b": (4096, 11008, 32, 32, True),
    "llama3-8b": (4096, 14336, 32, 8, True),
    "llama3-70b": (8192, 28672, 64, 8, True),
    "gpt3-175b": (12288, 49152, 96, 96, False),
    "llama3.1-405b": (16384, 53248, 128, 8, True),
}
# hetsim-layer-bench's layers (hidden, ffn, tokens): the fp16 rows, and exact samples for `hetsim validate`
LAYER_BENCH = [(1024, 4096, 4096), (2048, 8192, 2048), (2560, 10240, 2048), (4096, 16384, 2048), (4096, 16384, 4096),
               (4096, 11008, 4096), (12288, 49152, 2048)]
# name: hidden, expert ffn, experts, top-k
MOE = {
    "mixtral-8x7b": (4096, 14336, 8, 2),
    "llama4-scout": (5120, 8192, 16, 1),
    "qwen3-30b-a3b": (2048, 768, 128, 8),
    "qwen3-235b-a22b": (4096, 1536, 128, 8),
    "deepseek-v3": (7168, 2048, 256, 8),
    "gpt-oss-120b": (2880, 2880, 128, 4),
}
# GPT-OSS-120B's attention GEMMs (hidden 2880, 64 query and 8 key/value heads of 64: wider than hidden),
# which layer_gemms (head = hidden / heads) cannot say: (in, out) of the QKV and output projections.
GPT_OSS_ATTENTION = [(2880, (64 + 2 * 8) * 64), (64 * 64, 2880)]


def layer_gemms(hidden, ffn, heads, kv, gated, tp):
    """(in features, out features) of a layer's four GEMMs on one of tp GPUs."""
    head = hidden // heads
    return [(hidden, (heads + 2 * kv) * head // tp), (hidden // tp, hidden), (hidden, (2 if gated else 1) * ffn // tp),
            (ffn // tp, hidden)]


def dense_shapes(quick):
    """{(tokens, in, out)} for the bf16/fp8 grid."""
    shapes = set()
    for name, (h, f, a, kv, gated) in DENSE.items():
        for tp in [1] if quick else [1, 2, 4, 8]:
            for tokens in [4096] if quick else [2048, 4096, 8192]:
                for fin, fout in layer_gemms(h, f, a, kv, gated, tp):
                    shapes.add((tokens, fin, fout))
        if quick:
            break
    for h, f, tokens in LAYER_BENCH:
        for fin, fout in [(h, 3 * h), (h, h), (h, f), (f, h)]:
            shapes.add((tokens, fin, fout))
    if not quick:
        # GPT-OSS-120B's BF16 recipes run micro-batches of 1 sequence of 4096 tokens (H100) and of 4 (Blackwell).
        for tokens in [4096, 16384]:
            for fin, fout in GPT_OSS_ATTENTION:
                shapes.add((tokens, fin, fout))
        # Userbuffers' ring-exchange overlap (Transformer Engine under the FP8 recipes' tp_comm_overlap:
        # comm_gemm_overlap.cpp, split_overlap_ag / split_overlap_rs) runs each GEMM beside a
        # sequence-parallel collective as tp GEMMs of tokens / tp rows: those chunks, for the models the
        # shipped FP8 recipes train, at 4096 and 8192 tokens (the 405B at TP 8, CP 2: 512 rows).
        for name in ("llama3-8b", "llama3-70b", "llama3.1-405b"):
            h, f, a, kv, gated = DENSE[name]
            for tp in [2, 4, 8]:
                for tokens in [4096, 8192]:
                    for fin, fout in layer_gemms(h, f, a, kv, gated, tp):
                        shapes.add((tokens // tp, fin, fout))
    return sorted(shapes)


def timed(fn):
    # From CUDA graphs: eager launches made kernels under ~30 us look like the host's dispatch time.
    # Fewer samples than the kernel tables: the grid is large and these GEMMs are steady.
    return graph_median_seconds(fn, warmup=2, timed=7)


def dense_rows(shapes, dtype_name, common, emit):
    fp8 = dtype_name == "fp8"
    dt = torch.bfloat16 if fp8 else {"bf16": torch.bfloat16, "fp16": torch.float16}[dtype_name]
    one = torch.ones((), device="cuda", dtype=torch.float32)
    for i, (m, fin, fout) in enumerate(shapes):
        x = torch.randn(m, fin, device="cuda", dtype=dt)
        w = torch.randn(fout, fin, device="cuda", dtype=dt) * 0.02
        b = torch.randn(fout, device="cuda", dtype=dt)
        dy = torch.randn(m, fout, device="cuda", dtype=dt)
        if fp8:
            # K-major operands for every product, as Transformer Engine's cast-transpose leaves them.
            xq, wq = x.to(E4M3), w.to(E4M3)                      # [m, fin], [fout, fin]
            dyq, wtq = dy.to(E4M3), w.t().contiguous().to(E4M3)  # [m, fout], [fin, fout]
            dytq, xtq = dy.t().contiguous().to(E4M3), x.t().contiguous().to(E4M3)  # [fout, m], [fin, m]
            # Transformer Engine's fp8 recipes accumulate the forward GEMM fast (use_split_accumulator
            # False) and the backward ones in split accumulators (True): the same here.
            fwd = timed(lambda: torch._scaled_mm(xq, wq.t(), scale_a=one, scale_b=one, bias=b, out_dtype=dt,
                                                 use_fast_accum=True))
            dgrad = timed(lambda: torch._scaled_mm(dyq, wtq.t(), scale_a=one, scale_b=one, out_dtype=dt))
            wgrad = timed(lambda: torch._scaled_mm(dytq, xtq.t(), scale_a=one, scale_b=one, out_dtype=dt))
            del xq, wq, dyq, wtq, dytq, xtq
        else:
            fwd = timed(lambda: F.linear(x, w, b))
            dgrad = timed(lambda: torch.mm(dy, w))
            wgrad = timed(lambda: torch.mm(dy.t(), x))
        del x, w, b, dy
        emit([common(kernel, dtype_name, 1, mm, nn, kk, sec)
              for kernel, mm, nn, kk, sec in (("gemm_fwd", m, fout, fin, fwd), ("gemm_dgrad", m, fin, fout, dgrad),
                                              ("gemm_wgrad", fout, fin, m, wgrad))])
        tf = 2.0 * m * fin * fout
        print(f"{dtype_name} [{i + 1}/{len(shapes)}] tokens={m:5d} in={fin:6d} out={fout:6d}: fwd {fwd * 1e3:8.3f} ms "
              f"({tf / fwd / 1e12:6.1f} TFLOP/s) dgrad {dgrad * 1e3:8.3f} ({tf / dgrad / 1e12:6.1f}) wgrad "
              f"{wgrad * 1e3:8.3f} ({tf / wgrad / 1e12:6.1f})", flush=True)


def routed_rows(tokens, experts, top_k, groups, seed=1234):
    """Rows each of `groups` local experts receives (padded to 16) when `tokens` tokens pick top_k of
    `experts` and every one of the ep = experts / groups GPUs sends this GPU its tokens for them."""
    g = torch.Generator(device="cpu").manual_seed(seed)
    ep = experts // groups
    counts = torch.zeros(groups, dtype=torch.int64)
    for _ in range(min(ep, 8)):  # tokens from up to 8 senders (more only averages further)
        logits = torch.randn(tokens, experts, generator=g)
        chosen = logits.topk(top_k, dim=1).indices.flatten()
        counts += torch.bincount(chosen, minlength=experts)[:groups]
    counts = counts * ep // min(ep, 8)
    return [int((c + 15) // 16 * 16) for c in counts.tolist()]


def moe_configs(quick):
    """(label, hidden, expert ffn, experts, top_k, groups, tokens) to measure."""
    out = []
    for name, (h, f, e, k) in MOE.items():
        for ep in [1, 8] if quick else [1, 8, 16, 64]:
            if e % ep or e // ep < 1 or (ep > e):
                continue
            for tokens in [4096] if quick else [4096, 8192]:
                out.append((f"{name} ep={ep}", h, f, e, k, e // ep, tokens))
        if quick:
            break
    if not quick:
        for e in [8, 16, 32, 64, 128, 256]:
            for k in [2, 4, 8]:
                if k <= e:
                    out.append((f"grid e={e} k={k}", 4096, 2048, e, k, e, 4096))
    return out


def optional(label, fn):
    """fn's median time, or None (printed) where this PyTorch lacks that form of the kernel."""
    try:
        return timed(fn)
    except Exception as e:  # noqa: BLE001
        print(f"  {label} not measured: {type(e).__name__}: {str(e)[:200]}", flush=True)
        return None


def grouped_rows(configs, dtype_name, common, emit):
    """Expert layer GEMMs (up: hidden -> 2 x ffn (SwiGLU), down: ffn -> hidden) in one kernel each."""
    fp8 = dtype_name == "fp8"
    for i, (label, h, f, e, k, groups, tokens) in enumerate(configs):
        counts = routed_rows(tokens, e, k, groups)
        total = sum(counts)
        offs = torch.tensor(counts, device="cuda", dtype=torch.int32).cumsum(0, dtype=torch.int32)
        for gemm, fin, fout in (("up", h, 2 * f), ("down", f, h)):
            x = torch.randn(total, fin, device="cuda", dtype=torch.bfloat16)
            dy = torch.randn(total, fout, device="cuda", dtype=torch.bfloat16)
            # Weights [groups, out, in]; each product gets its right operand K-major, as the kernels want.
            w_kmajor = torch.randn(groups, fout, fin, device="cuda", dtype=torch.bfloat16).transpose(1, 2)  # [g, in, out]
            w_nmajor = torch.randn(groups, fin, fout, device="cuda", dtype=torch.bfloat16).transpose(1, 2)  # [g, out, in]
            if fp8:
                sx = torch.ones(total, device="cuda", dtype=torch.float32)
                sw_out = torch.ones(groups, fout, device="cuda", dtype=torch.float32)
                sw_in = torch.ones(groups, fin, device="cuda", dtype=torch.float32)
                xq, dyq = x.to(E4M3), dy.to(E4M3)
                wkq = w_kmajor.transpose(1, 2).to(E4M3).transpose(1, 2)
                wnq = w_nmajor.transpose(1, 2).to(E4M3).transpose(1, 2)
                fwd = timed(lambda: torch._scaled_grouped_mm(xq, wkq, sx, sw_out, offs=offs, out_dtype=torch.bfloat16))
                dgrad = timed(lambda: torch._scaled_grouped_mm(dyq, wnq, sx, sw_in, offs=offs, out_dtype=torch.bfloat16))
                wgrad = None  # row-wise fp8 scaled grouped GEMM has no 2d x 2d (weight-gradient) form
            else:
                fwd = timed(lambda: torch._grouped_mm(x, w_kmajor, offs=offs))
                dgrad = timed(lambda: torch._grouped_mm(dy, w_nmajor, offs=offs))
                dyt = dy.t().contiguous().t()  # [total, out], column-major: its transpose is row-major
                xt = x.t().contiguous().t()
                wgrad = optional("grouped weight gradient", lambda: torch._grouped_mm(dyt.t(), xt, offs=offs))
            rows = [common("grouped_gemm_fwd", dtype_name, groups, total, fout, fin, fwd),
                    common("grouped_gemm_dgrad", dtype_name, groups, total, fin, fout, dgrad)]
            if wgrad is not None:
                rows.append(common("grouped_gemm_wgrad", dtype_name, groups, fout, fin, total, wgrad))
            emit(rows)
            tf = 2.0 * total * fin * fout
            print(f"{dtype_name} grouped [{i + 1}/{len(configs)}] {label} tokens={tokens} {gemm}: {groups} experts, "
                  f"{total} rows ({min(counts)}-{max(counts)} each): fwd {fwd * 1e3:.3f} ms ({tf / fwd / 1e12:.1f} "
                  f"TFLOP/s) dgrad {dgrad * 1e3:.3f}" + ("" if wgrad is None else f" wgrad {wgrad * 1e3:.3f}"),
                  flush=True)
            del x, dy, w_kmajor, w_nmajor


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", required=True, help="hetsim device name the rows are filed under")
    ap.add_argument("--out", required=True, help="kernel table CSV to append to")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", choices=["dense", "grouped"], help="one part alone")
    a = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("framework_gemms.py: no CUDA GPU")
    gpu, driver, clock, date = identity()
    lib = library()
    print(f"framework_gemms.py: {gpu}, {driver}, {clock} MHz, {lib}, {date}", flush=True)

    def common(kernel, dtype_name, batch, m, n, k, sec):
        return [a.device, kernel, dtype_name, batch, m, n, k, "", f"{sec:.9g}", gpu, driver, clock, date, lib,
                f"{sec.mhz:.0f}"]

    def emit(rows):  # each shape's rows as soon as they are measured: a later failure keeps them
        append_rows(a.out, HEADER, rows)

    shapes = dense_shapes(a.quick)
    configs = moe_configs(a.quick)
    cap = torch.cuda.get_device_capability()
    parts = []
    if a.only in (None, "dense"):
        parts += [("bf16", lambda: dense_rows(shapes, "bf16", common, emit)),
                  ("fp16", lambda: dense_rows([s for s in shapes if s in layer_bench_shapes()], "fp16", common, emit))]
        if E4M3 is not None and cap >= (8, 9):
            parts.append(("fp8", lambda: dense_rows(shapes, "fp8", common, emit)))
    if a.only in (None, "grouped"):
        parts.append(("bf16 grouped", lambda: grouped_rows(configs, "bf16", common, emit)))
        if E4M3 is not None and cap >= (9, 0):
            parts.append(("fp8 grouped", lambda: grouped_rows(configs, "fp8", common, emit)))
    failed = []
    for label, run in parts:
        try:
            run()
        except Exception as e:  # noqa: BLE001 - one unsupported part must not cost the others
            print(f"framework_gemms.py: {label} stopped: {type(e).__name__}: {str(e)[:300]}", flush=True)
            failed.append(label)
        torch.cuda.empty_cache()
    if failed:
        print(f"framework_gemms.py: stopped early: {', '.join(failed)}")


def layer_bench_shapes():
    out = set()
    for h, f, tokens in LAYER_BENCH:
        for fin, fout in [(h, 3 * h), (h, h), (h, f), (f, h)]:
            out.add((tokens, fin, fout))
    return out


if __name__ == "__main__":
    main()
