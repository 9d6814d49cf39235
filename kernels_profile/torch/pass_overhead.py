#!/usr/bin/env python3
"""Measures the fixed cost of a forward and a backward pass in a PyTorch training step: a tiny GPT
(hidden 256, 4 heads, 128 tokens, micro-batch 1: its arithmetic is microseconds), whose step time is
then the framework's own (Python, autograd, kernel launches, the optimizer). One row per
(layers, micro-batches, mode):

  fwd_s   wall time of `micro_batches` forward passes (autograd recording, as in training)
  step_s  wall time of a training step: zero the gradients, `micro_batches` forward + backward
          passes accumulating gradients, AdamW (foreach) step

mode eager: PyTorch as a plain training loop runs it, bf16 autocast; mode cuda_graph: each
micro-batch's forward + backward replayed from one captured CUDA graph (PyTorch's whole-network
capture), the optimizer eager. Each figure is the median of 9 steps after 3 warm-up steps, host
and GPU synchronised before and after. `hetsim validate --steps FILE` fits
step = c0 + micro_batches x (p0 + layers x p1) and reports the per-pass costs.

Usage: pass_overhead.py --device H100-SXM5-80GB --out kernels_profile/measured/steps/h100.csv [--quick]
"""
import argparse
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

from timing import append_rows, identity, library

HEADER = ["device", "mode", "layers", "micro_batches", "hidden", "heads", "seq_len", "fwd_s", "step_s", "gpu", "driver",
          "clock_mhz", "date", "library"]
HIDDEN, HEADS, SEQ, VOCAB = 256, 4, 128, 1024


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(HIDDEN), nn.LayerNorm(HIDDEN)
        self.qkv, self.proj = nn.Linear(HIDDEN, 3 * HIDDEN), nn.Linear(HIDDEN, HIDDEN)
        self.up, self.down = nn.Linear(HIDDEN, 4 * HIDDEN), nn.Linear(4 * HIDDEN, HIDDEN)

    def forward(self, x):
        b, s, h = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, s, 3, HEADS, h // HEADS).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, s, h)
        x = x + self.proj(a)
        return x + self.down(F.gelu(self.up(self.ln2(x))))


class TinyGpt(nn.Module):
    def __init__(self, layers):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, HIDDEN)
        self.blocks = nn.ModuleList(Block() for _ in range(layers))
        self.ln = nn.LayerNorm(HIDDEN)
        self.head = nn.Linear(HIDDEN, VOCAB, bias=False)

    def forward(self, tokens, labels):
        x = self.emb(tokens)
        for blk in self.blocks:
            x = blk(x)
        return F.cross_entropy(self.head(self.ln(x)).flatten(0, 1), labels.flatten())


def wall(fn, warmup=3, timed=9):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(timed):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def measure(layers, micro_batches, mode):
    torch.manual_seed(1234)
    model = TinyGpt(layers).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=True)
    tokens = torch.randint(0, VOCAB, (1, SEQ), device="cuda")
    labels = torch.randint(0, VOCAB, (1, SEQ), device="cuda")

    def loss_fn():
        with torch.autocast("cuda", dtype=torch.bfloat16, cache_enabled=False):
            return model(tokens, labels)

    if mode == "eager":
        def forward_only():
            for _ in range(micro_batches):
                loss_fn()

        def step():
            opt.zero_grad(set_to_none=True)
            for _ in range(micro_batches):
                loss_fn().backward()
            opt.step()
    else:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                opt.zero_grad(set_to_none=True)
                loss_fn().backward()
                opt.step()
        torch.cuda.current_stream().wait_stream(side)
        fwd_graph, step_graph = torch.cuda.CUDAGraph(), torch.cuda.CUDAGraph()
        with torch.cuda.graph(fwd_graph):
            loss_fn()
        opt.zero_grad(set_to_none=True)
        with torch.cuda.graph(step_graph):  # gradients land in the graph's own .grad tensors
            loss_fn().backward()

        def forward_only():
            for _ in range(micro_batches):
                fwd_graph.replay()

        def step():
            for _ in range(micro_batches):
                step_graph.replay()
            opt.step()

    return wall(forward_only), wall(step)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", required=True, help="hetsim device name the rows are filed under")
    ap.add_argument("--out", required=True, help="CSV to append to")
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("pass_overhead.py: no CUDA GPU")
    gpu, driver, clock, date = identity()
    lib = library()
    print(f"pass_overhead.py: {gpu}, {driver}, {clock} MHz, {lib}, {date}", flush=True)
    for mode in ("eager", "cuda_graph"):
        for layers in [1, 4] if a.quick else [1, 2, 4, 8]:
            for mb in [1, 4] if a.quick else [1, 2, 4, 8, 16]:
                try:
                    fwd, step = measure(layers, mb, mode)
                except Exception as e:  # noqa: BLE001 - graphs may be unsupported; keep the eager rows
                    print(f"pass_overhead.py: {mode} layers={layers} micro-batches={mb} not measured: "
                          f"{type(e).__name__}: {str(e)[:300]}", flush=True)
                    break
                append_rows(a.out, HEADER, [[a.device, mode, layers, mb, HIDDEN, HEADS, SEQ, f"{fwd:.9g}", f"{step:.9g}",
                                             gpu, driver, clock, date, lib]])
                print(f"{mode:10s} layers={layers} micro-batches={mb:2d}: forwards {fwd * 1e3:8.3f} ms, step "
                      f"{step * 1e3:8.3f} ms", flush=True)


if __name__ == "__main__":
    main()
