// File: workloads/layer_ops.hpp
// The parts of a transformer layer built outside op_graph.cpp's builder: the attention core
// (scores, softmax, context, or one fused kernel), DeepSeek's multi-head latent attention, and the
// mixture-of-experts feed-forward block. Internal to workloads/.
#pragma once

#include <string>
#include <vector>

#include "workloads/op_graph.hpp"

namespace hetsim {

// One micro-batch of a transformer model and the operators built for it so far.
struct LayerScope {
  const ModelSpec& model;
  double b = 0;  // samples in the micro-batch
  double s = 0;  // sequence length
  double h = 0;  // hidden width
  double e = 0;  // bytes per element
  bool flash = false;    // fused attention kernel
  bool dropout = false;  // dropout ops and masks
  std::vector<Op>& ops;

  [[nodiscard]] double tokens() const { return b * s; }
  [[nodiscard]] std::vector<long> act_shape(double width) const {
    return {static_cast<long>(b), model.seq_len, static_cast<long>(width)};
  }
  [[nodiscard]] int last() const { return static_cast<int>(ops.size()) - 1; }
  // Appends `op` reading `inputs` (none given: the previous op); returns its index.
  int add(Op op, std::vector<int> inputs = {}) const;
  // y[tokens, out] = x[tokens, in] · W[in, out] (+ bias) over the micro-batch's tokens.
  int linear(const std::string& name, int layer, double in, double out, bool bias, bool save_input = true,
             std::vector<int> inputs = {}) const;
  // The family's norm (llama: RMSNorm, else layernorm) over every token's `width` features.
  int norm(const std::string& name, int layer, double width) const;
};

// Head counts and widths of an attention: queries and keys of qk_dim, values of v_dim per head.
struct AttnDims {
  double heads = 0;
  double kv_heads = 0;  // distinct K/V heads (grouped-query attention), read by the fused kernel
  double qk_dim = 0;
  double v_dim = 0;
};

// QK^T, softmax, (dropout,) PV — or one fused flash-attention op — over `d`, named prefix +
// "attn_scores" ... or prefix + "attention". The first op reads `inputs` (default: the previous op).
void attention_core(const LayerScope& sc, const std::string& prefix, int layer, const AttnDims& d,
                    std::vector<int> inputs = {});

// Multi-head latent attention (the model's mla: block), from the attention norm's output (the
// previous op) to the output projection: q_down, q_norm, q_up (or q_proj), kv_down, kv_norm, kv_up,
// the attention core, attn_out.
void mla_attention(const LayerScope& sc, const std::string& prefix, int layer);

// The MoE feed-forward block of a layer (the model's moe: block), from the MLP norm's output (the
// previous op): router, router_topk, moe_permute, expert_fc1, expert_act, expert_fc2,
// moe_unpermute, then the shared experts (shared_fc1, shared_act, shared_fc2) if any. Returns the
// ops whose outputs the layer's residual adds: moe_unpermute, and shared_fc2 when there are
// shared experts.
[[nodiscard]] std::vector<int> moe_feed_forward(const LayerScope& sc, const std::string& prefix, int layer);

// A Mamba layer's mixer (the model's mamba: block, mamba_ops.cpp), from its norm's output (the previous
// op): mamba_in, ssm_scan, mamba_out_norm, mamba_out. Returns mamba_out.
int mamba_mixer(const LayerScope& sc, const std::string& prefix, int layer);

}  // namespace hetsim
