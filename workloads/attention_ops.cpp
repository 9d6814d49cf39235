// File: workloads/attention_ops.cpp
// The attention core of every transformer family (unfused or flash) and DeepSeek's multi-head
// latent attention, with the conventions of op_graph.cpp (workloads/README.md).
#include <algorithm>

#include "workloads/layer_ops.hpp"
#include "workloads/op_formulas.hpp"

namespace hetsim {

int LayerScope::add(Op op, std::vector<int> inputs) const {
  if (inputs.empty() && !ops.empty()) inputs.push_back(last());
  op.inputs = std::move(inputs);
  ops.push_back(std::move(op));
  return last();
}

int LayerScope::linear(const std::string& name, int layer, double in, double out, bool bias, bool save_input,
                       std::vector<int> inputs) const {
  Op op = linear_op(name, layer, tokens(), in, out, bias, act_shape(out), e, OpKind::kLinear, save_input);
  op.eager_bias_grad = bias && model.training.kernels == TrainingKernels::kEager;  // as the builder's linear layers
  return add(std::move(op), std::move(inputs));
}

int LayerScope::norm(const std::string& name, int layer, double width) const {
  return add(norm_op(name, layer, tokens(), width, model.family == Family::kLlama, act_shape(width), e));
}

double flash_tile_share(long seq_len, long window) {
  constexpr long kTile = 128;
  const long n = std::max(1L, (seq_len + kTile - 1) / kTile);
  if (window <= 0 || window >= seq_len) return static_cast<double>(n + 1) / static_cast<double>(2 * n);
  // Query tile i holds queries i·T .. (i + 1)·T - 1, whose keys start at i·T - (window - 1): tiles
  // 0 .. i while that is at most 0 (i <= k = floor((window - 1) / T)), then the diagonal tile and the
  // c = ceil((window - 1) / T) before it.
  const long k = std::min(n - 1, (window - 1) / kTile), c = (window - 1 + kTile - 1) / kTile;
  const double tiles = static_cast<double>((k + 1) * (k + 2) / 2) + static_cast<double>((n - 1 - k) * (c + 1));
  return tiles / (static_cast<double>(n) * static_cast<double>(n));
}

namespace {

// FlashAttention (Dao et al. 2022; FlashAttention-2): one kernel per pass, no s x s tensor in
// memory. Forward: QK^T and PV, 2bs^2·a·(qk_dim + v_dim) FLOPs (4bs^2h for equal widths); reads
// Q, K, V, writes O and the row log-sum-exp (fp32). Backward: twice that, plus QK^T again
// (bwd_recompute_flops) to rebuild the probabilities; reads Q, K, V, O, dO, LSE, writes dQ, dK, dV.
// Dropout inside the kernel regenerates its mask from the RNG state: nothing kept. Keeps Q, K, V
// and the LSE (O is the output projection's saved input). Causal models (gpt, llama) skip the
// tiles above the diagonal: of n x n tiles of 128 x 128 (n = s / 128, rounded up), n(n + 1) / 2
// are computed. FlashAttention-2 (Dao 2023, Section 3.1.1: "causal masking ... skip the
// computation of about half of the blocks"; block sizes 64 to 128, 128 taken here). Under a
// sliding window of w keys (sliding_window:) each query reads w keys, not s: 2bswa(qk_dim + v_dim)
// model FLOPs, and the kernel computes the tiles the band reaches (flash_tile_share).
void flash_attention(const LayerScope& sc, const std::string& p, int layer, const AttnDims& d, std::vector<int> inputs) {
  const ModelSpec& m = sc.model;
  const double b = sc.b, s = sc.s, e = sc.e, t = sc.tokens();
  Op op = Op::make(p + "attention", OpKind::kFlashAttention, layer);
  op.shape = sc.act_shape(d.heads * d.v_dim);
  double keys = s;  // per query, as the model FLOPs count them
  if (m.family == Family::kGpt || m.family == Family::kLlama) {
    op.causal = true;
    op.window = attention_window(m, layer);
    if (op.window > 0) keys = static_cast<double>(op.window);
    op.tile_fraction = flash_tile_share(m.seq_len, op.window) * s / keys;
  }
  op.gemm = {static_cast<long>(b) * m.heads, m.seq_len, m.seq_len, static_cast<long>(d.qk_dim)};
  op.fused_attention = m.training.attention == AttentionKernel::kFused;
  op.fwd_flops = 2 * b * s * keys * d.heads * (d.qk_dim + d.v_dim);
  op.bwd_flops = 2 * op.fwd_flops;
  op.bwd_recompute_flops = 2 * b * s * keys * d.heads * d.qk_dim;
  const double lse = b * d.heads * s * 4;
  const double qkv = t * (d.heads * d.qk_dim + d.kv_heads * (d.qk_dim + d.v_dim)) * e;
  const double out = t * d.heads * d.v_dim * e;
  op.fwd_bytes = qkv + out + lse;
  op.bwd_bytes = 2 * qkv + 2 * out + lse;
  op.saved_bytes = qkv + lse;
  sc.add(std::move(op), std::move(inputs));
}

// The unfused path: QK^T (keeps Q and K, K expanded to every head as Megatron's unfused core
// attention does), Megatron's fused scale-mask-softmax (keeps its output), dropout on the
// probabilities (keeps the mask and its output), PV (keeps V). Under a sliding window every score
// is still computed and then masked: the kernels' time is the full s x s one (tile_fraction s / w
// over model FLOPs that, as the fused path's, count w keys a query).
void standard_attention(const LayerScope& sc, const std::string& p, int layer, const AttnDims& d,
                        std::vector<int> inputs) {
  const ModelSpec& m = sc.model;
  const double b = sc.b, s = sc.s, e = sc.e, t = sc.tokens();
  const long window = attention_window(m, layer);  // only gpt and llama models have one
  const double keys = window > 0 ? static_cast<double>(window) : s;  // per query, as model FLOPs count them
  const double score_elems = b * d.heads * s * s;
  const double q = t * d.heads * d.qk_dim, v = t * d.heads * d.v_dim;
  const std::vector<long> score_shape{static_cast<long>(b), m.heads, m.seq_len, m.seq_len};
  // Scores: 2·b·s²·a·qk_dim FLOPs; keeps Q and K for backward.
  Op scores = Op::make(p + "attn_scores", OpKind::kAttnScores, layer);
  scores.shape = score_shape;
  scores.gemm = {static_cast<long>(b) * m.heads, m.seq_len, m.seq_len, static_cast<long>(d.qk_dim)};
  scores.fwd_flops = 2 * b * s * keys * d.heads * d.qk_dim;
  scores.bwd_flops = 2 * scores.fwd_flops;
  scores.tile_fraction = s / keys;
  scores.fwd_bytes = (2 * q + score_elems) * e;
  scores.bwd_bytes = 2 * scores.fwd_bytes;
  scores.saved_bytes = 2 * q * e;
  sc.add(std::move(scores), std::move(inputs));
  // Softmax over s keys: ~5 FLOPs per element (model FLOPs: the window's); backward reads dP and P, writes dS.
  Op sm = vector_op(p + "softmax", OpKind::kSoftmax, layer, score_elems, 5 * keys / s, 2, 0, score_elems, score_shape, e);
  sm.tile_fraction = s / keys;
  sm.bwd_bytes = 3 * score_elems * e;
  sc.add(std::move(sm));
  if (sc.dropout) sc.add(dropout_op(p + "attn_dropout", layer, score_elems, score_shape, true, e));
  Op ctx = Op::make(p + "attn_context", OpKind::kAttnContext, layer);
  ctx.shape = sc.act_shape(d.heads * d.v_dim);
  ctx.gemm = {static_cast<long>(b) * m.heads, m.seq_len, static_cast<long>(d.v_dim), m.seq_len};
  ctx.fwd_flops = 2 * b * s * keys * d.heads * d.v_dim;
  ctx.bwd_flops = 2 * ctx.fwd_flops;
  ctx.tile_fraction = s / keys;
  ctx.fwd_bytes = (score_elems + 2 * v) * e;
  ctx.bwd_bytes = 2 * ctx.fwd_bytes;
  ctx.saved_bytes = v * e;  // V (the probabilities are kept by softmax or dropout)
  sc.add(std::move(ctx));
}

}  // namespace

void attention_core(const LayerScope& sc, const std::string& prefix, int layer, const AttnDims& d,
                    std::vector<int> inputs) {
  if (sc.flash) {
    flash_attention(sc, prefix, layer, d, std::move(inputs));
  } else {
    standard_attention(sc, prefix, layer, d, std::move(inputs));
  }
}

// DeepSeek-V2/V3 (arXiv 2405.04434 Section 2.1; 2412.19437 Section 2.1.1), as trained (keys and
// values up-projected, not the inference-time absorbed form): queries c_Q = W_DQ·x (q_lora_rank),
// normalised, q = W_UQ·c_Q with qk_nope + qk_rope features per head (or q = W_Q·x without a query
// latent); kv_down gives the latent c_KV (kv_lora_rank) and one rotary key k_R (qk_rope) shared by
// every head; c_KV is normalised and up-projected to each head's qk_nope key and v_head_dim value.
// Attention runs per head with keys of qk_nope + qk_rope (k_R expanded to every head, as HF's and
// Megatron-Core's training paths do) and values of v_head_dim; attn_out maps heads x v_head_dim to
// hidden. The rotary embedding itself is not an op (as in the other families).
void mla_attention(const LayerScope& sc, const std::string& p, int layer) {
  const MlaSpec& mla = *sc.model.mla;
  const double a = static_cast<double>(sc.model.heads);
  const double nope = static_cast<double>(mla.qk_nope_head_dim), rope = static_cast<double>(mla.qk_rope_head_dim);
  const double v = static_cast<double>(mla.v_head_dim), kv_lora = static_cast<double>(mla.kv_lora_rank);
  const bool bias = sc.model.family != Family::kLlama;
  const int x = sc.last();  // the attention norm's output, read by the query's and the keys' down-projections
  add_fork_gradient_sums(sc.ops[static_cast<size_t>(x)], sc.tokens() * sc.h, 2, sc.e);  // their gradients summed
  int q = 0;
  if (mla.q_lora_rank) {
    const double q_lora = static_cast<double>(*mla.q_lora_rank);
    sc.linear(p + "q_down", layer, sc.h, q_lora, bias);
    sc.norm(p + "q_norm", layer, q_lora);
    q = sc.linear(p + "q_up", layer, q_lora, a * (nope + rope), bias);
  } else {
    q = sc.linear(p + "q_proj", layer, sc.h, a * (nope + rope), bias);
  }
  // Reads the tensor the query projection keeps: kept once, by it.
  const int kv_down = sc.linear(p + "kv_down", layer, sc.h, kv_lora + rope, bias, false, {x});
  sc.norm(p + "kv_norm", layer, kv_lora);
  const int kv = sc.linear(p + "kv_up", layer, kv_lora, a * (nope + v), bias);
  attention_core(sc, p, layer, {a, a, nope + rope, v}, {q, kv, kv_down});
  sc.linear(p + "attn_out", layer, a * v, sc.h, bias);
}

}  // namespace hetsim
