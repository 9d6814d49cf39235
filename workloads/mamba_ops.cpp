// File: workloads/mamba_ops.cpp
// The Mamba-2 mixer of a hybrid model's Mamba layers (the model's mamba: block), as Megatron-Core's
// MambaMixer trains it (megatron/core/ssm/mamba_mixer.py, use_mamba_mem_eff_path: mamba_ssm's
// mamba_split_conv1d_scan_combined), with the conventions of op_graph.cpp.
#include "workloads/layer_ops.hpp"
#include "workloads/op_formulas.hpp"

namespace hetsim {

namespace {

// A mixer's widths, as doubles for the byte and FLOP sums.
struct MambaDims {
  double heads = 0, head_dim = 0, groups = 0, state = 0;
  double inner = 0;    // heads x head_dim
  double conv = 0;     // the convolved channels: x, B and C
  double in_proj = 0;  // z, x, B, C and dt
};

MambaDims mamba_dims(const MambaSpec& m) {
  MambaDims d;
  d.heads = static_cast<double>(m.heads);
  d.head_dim = static_cast<double>(m.head_dim);
  d.groups = static_cast<double>(m.groups);
  d.state = static_cast<double>(m.state_dim);
  d.inner = d.heads * d.head_dim;
  d.conv = d.inner + 2 * d.groups * d.state;
  d.in_proj = 2 * d.inner + 2 * d.groups * d.state + d.heads;
  return d;
}

}  // namespace

// in_proj (h -> z, x, B, C, dt: 2·inner + 2·groups·state + heads, no bias; Megatron fuses the
// layer's norm into it), the scan (one op for the fused causal depthwise convolution, SiLU and the
// chunked SSD scan with its D skip and z gate), the group RMSNorm over the gated output, out_proj
// (inner -> h, no bias).
//
// The scan's work per token (SSD, Dao & Gu 2024, Section 6: chunks of Q tokens; heads H of width P,
// state N, groups G sharing B and C; K conv taps over inner + 2GN channels):
//   conv        2·K FLOPs per channel;
//   C·Bᵀ        per group, within the chunk: 2·Q·N;
//   intra-chunk (C·Bᵀ ∘ L)·X per head: 2·Q·P;
//   states      Bᵀ·X per head into a P x N state: 2·N·P, and C·state out of it: 2·N·P;
//   gate, skip  y·silu(z) + D·x: 7 per inner element.
// The Triton kernels compute these with tensor-core dots: FLOPs at the training dtype's matrix peak.
// Bytes, per token (e: element bytes; fp32 for the chunk states and C·Bᵀ, as mamba_ssm keeps them;
// S = H·P·N / Q state elements per token):
//   conv        reads and writes the conv channels: 2·(inner + 2GN)·e;
//   chunk_cumsum reads dt, writes dt and its cumulative sum (fp32): H·e + 2H·4;
//   chunk_state reads x, B and the sums: (inner + GN)·e + H·4, writes the chunk states: 4S;
//   state_passing reads and writes them: 8S;
//   bmm_chunk   reads B and C, writes C·Bᵀ: 2GN·e + 4GQ;
//   chunk_scan  reads C·Bᵀ, x, C, the states, z and dt, writes y: 4GQ + (3·inner + GN)·e + 4S + 4H.
// Backward (mamba_ssm's _mamba_chunk_scan_combined_bwd with checkpoint_lvl 1): the conv and the
// chunk states recomputed (their forward bytes again), then every forward kernel's gradient, which
// reads what its forward read plus its output's gradient and writes its inputs' gradients: taken
// as twice the forward's bytes. A stated model, not a measurement (the cost model's roofline).
// Keeps the in_proj output (zxBCdt), as the fused function saves it; its gated output is the norm's
// saved input.
int mamba_mixer(const LayerScope& sc, const std::string& p, int layer) {
  const MambaSpec& ms = *sc.model.mamba;
  const MambaDims d = mamba_dims(ms);
  const double t = sc.tokens(), e = sc.e, h = sc.h;
  const double q = static_cast<double>(ms.chunk_size), k = static_cast<double>(ms.conv_kernel);
  const double gn = d.groups * d.state, s = d.heads * d.head_dim * d.state / q;

  const int in = sc.linear(p + "mamba_in", layer, h, d.in_proj, false);

  Op scan = Op::make(p + "ssm_scan", OpKind::kSsmScan, layer);
  scan.shape = sc.act_shape(d.inner);
  const double flops = 2 * k * d.conv + 2 * q * d.groups * d.state + d.heads * (2 * q * d.head_dim + 4 * d.state * d.head_dim) +
                       7 * d.inner;
  scan.fwd_flops = t * flops;
  scan.bwd_flops = 2 * scan.fwd_flops;
  const double conv_bytes = 2 * d.conv * e;
  const double state_bytes = (d.inner + gn) * e + 4 * d.heads + 4 * s + 8 * s;
  const double fwd = conv_bytes + (d.heads * e + 8 * d.heads) + state_bytes + (2 * gn * e + 4 * d.groups * q) +
                     (4 * d.groups * q + (3 * d.inner + gn) * e + 4 * s + 4 * d.heads);
  scan.fwd_bytes = t * fwd;
  scan.bwd_bytes = t * (conv_bytes + state_bytes + 2 * fwd);
  // Conv weights and bias; dt_bias, A_log and D per head.
  scan.params = d.conv * k + d.conv + 3 * d.heads;
  scan.saved_bytes = t * d.in_proj * e;
  sc.add(std::move(scan), {in});

  // The group RMSNorm (groups of inner / G channels, mamba_ssm's RMSNormGated without a gate here:
  // the scan gated its output).
  sc.add(norm_op(p + "mamba_out_norm", layer, t, d.inner, true, sc.act_shape(d.inner), e));
  return sc.linear(p + "mamba_out", layer, d.inner, h, false);
}

}  // namespace hetsim
