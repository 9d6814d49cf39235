// File: planner/hybrid/op_shard.cpp
#include "planner/hybrid/op_shard.hpp"

#include <algorithm>
#include <cmath>

#include "workloads/gemm_precision.hpp"

namespace hetsim {

int TpBytes::count() const {
  return (all_reduce > 0 ? 1 : 0) + (all_gather > 0 ? 1 : 0) + (reduce_scatter > 0 ? 1 : 0) + (all_to_all > 0 ? 1 : 0);
}

TpBytes& TpBytes::operator+=(const TpBytes& o) {
  all_reduce += o.all_reduce;
  all_gather += o.all_gather;
  reduce_scatter += o.reduce_scatter;
  all_to_all += o.all_to_all;
  return *this;
}

namespace {

// A column-split linear layer inside a transformer layer: its input comes from the sequence-parallel
// region under SP (the LM head's input is gathered by the final norm's conversion).
bool regathers_input(const Op& op) { return op.kind == OpKind::kLinear && op.layer >= 0; }

// Scales `s`'s memory traffic (from `op`'s): the activations' by `activations`, the weight matrix's
// (read in the forward; read and its gradient written in the backward) by `weights`.
void scale_traffic(Op& s, const Op& op, DType dtype, double activations, double weights) {
  const double weight = is_matmul(op.kind) && op.params > 0
                            ? static_cast<double>(op.gemm.batch) * static_cast<double>(op.gemm.k) *
                                  static_cast<double>(op.gemm.n) * dtype_bytes(op.gemm_dtype.value_or(dtype))
                            : 0;
  s.fwd_bytes = std::max(0.0, op.fwd_bytes - weight) * activations + std::min(op.fwd_bytes, weight) * weights;
  s.bwd_bytes = std::max(0.0, op.bwd_bytes - 2 * weight) * activations + std::min(op.bwd_bytes, 2 * weight) * weights;
}

}  // namespace

TpSplit megatron_split(const Op& op, bool sequence_parallel) {
  // Routed experts run whole on every GPU of the TP group: expert parallelism divides them, not TP.
  // The router and the token permutations work on the tokens a GPU holds: its own 1/tp of the
  // sequence under sequence parallelism (which Megatron-Core requires for MoE with TP), all of them
  // otherwise; so do latent MoE's projections (parallel_mode "duplicated": their weights whole on every
  // GPU of the group).
  if (op.expert) return TpSplit::kReplicated;
  if (op.name.ends_with(".router") || op.name.ends_with(".router_topk") || op.kind == OpKind::kMoeDispatch ||
      op.kind == OpKind::kMoeCombine || op.name.ends_with(".moe_latent_in") || op.name.ends_with(".moe_latent_out")) {
    return sequence_parallel ? TpSplit::kSequence : TpSplit::kReplicated;
  }
  switch (op.kind) {
    case OpKind::kLinear:
      // Latent attention (mla:): the up-projections split by heads, like qkv; q_down, kv_down
      // and the router stay whole.
      if (op.name.ends_with(".qkv") || op.name.ends_with(".mlp_up") || op.name.ends_with(".mlp_gate_up") ||
          op.name.ends_with(".shared_fc1") || op.name.ends_with(".q_up") || op.name.ends_with(".q_proj") ||
          op.name.ends_with(".kv_up") || op.name.ends_with(".mamba_in")) {
        return TpSplit::kColumn;
      }
      if (op.name.ends_with(".attn_out") || op.name.ends_with(".mlp_down") || op.name.ends_with(".shared_fc2") ||
          op.name.ends_with(".mamba_out")) {
        return TpSplit::kRow;
      }
      return TpSplit::kReplicated;
    case OpKind::kLmHead: return TpSplit::kColumn;  // vocabulary-parallel output layer
    case OpKind::kLayerNorm:
    case OpKind::kRmsNorm:  // MLA's q_norm and kv_norm: over the whole latent; a Mamba mixer's by its heads
      if (op.name.ends_with(".q_norm") || op.name.ends_with(".kv_norm")) return TpSplit::kReplicated;
      if (op.name.ends_with(".mamba_out_norm")) return TpSplit::kSharded;
      return sequence_parallel ? TpSplit::kSharded : TpSplit::kReplicated;
    case OpKind::kAttnScores:
    case OpKind::kSoftmax:
    case OpKind::kAttnContext:
    case OpKind::kLoss: return TpSplit::kSharded;   // by heads / by vocabulary
    case OpKind::kFlashAttention:  // by heads
    case OpKind::kSsmScan: return TpSplit::kSharded;  // by SSM heads and groups
    case OpKind::kActivation: return op.layer >= 0 ? TpSplit::kSharded : TpSplit::kReplicated;
    case OpKind::kDropout:  // attention dropout by heads; the embedding's by sequence under SP
      return op.layer >= 0 || sequence_parallel ? TpSplit::kSharded : TpSplit::kReplicated;
    case OpKind::kResidual: return sequence_parallel ? TpSplit::kSharded : TpSplit::kReplicated;
    default: return TpSplit::kReplicated;
  }
}

Op tp_shard(const Op& op, TpSplit split, int tp, bool sequence_parallel) {
  Op s = op;
  if (tp == 1 || split == TpSplit::kReplicated) return s;
  if (split == TpSplit::kColumn) {
    shard_casts(s, sequence_parallel && regathers_input(op) ? CastOperand::kGathered : CastOperand::kWhole, CastOperand::kSplit, tp);
  } else if (split == TpSplit::kRow) {
    shard_casts(s, CastOperand::kSplit, sequence_parallel ? CastOperand::kGathered : CastOperand::kWhole, tp);
  } else {
    shard_casts(s, CastOperand::kSplit, CastOperand::kSplit, tp);
  }
  const double f = 1.0 / tp;
  s.fwd_flops *= f;
  s.bwd_flops *= f;
  s.fwd_bytes *= f;
  s.bwd_bytes *= f;
  s.params *= f;
  switch (split) {
    case TpSplit::kColumn:  // input replicated: saved in full, or by sequence under SP
      s.gemm.n = std::max(1L, s.gemm.n / tp);
      if (sequence_parallel && regathers_input(op)) s.saved_bytes *= f;
      break;
    case TpSplit::kRow:
      s.gemm.k = std::max(1L, s.gemm.k / tp);
      s.saved_bytes *= f;
      break;
    default:  // each rank an equal slice: of the batched products (heads), else of the rows (data)
      if (s.gemm.batch >= tp) s.gemm.batch = std::max(1L, s.gemm.batch / tp);
      else if (s.gemm.m > 0) s.gemm.m = std::max(1L, (s.gemm.m + tp - 1) / tp);
      s.saved_bytes *= f;
  }
  return s;
}

Op context_shard(const Op& op, int cp, DType dtype) {
  if (cp == 1) return op;
  Op s = op;
  const double f = 1.0 / cp;
  for (double* x : {&s.fwd_flops, &s.bwd_flops, &s.recompute_flops, &s.bwd_recompute_flops, &s.saved_bytes,
                    &s.cast_fwd_bytes, &s.cast_bwd_bytes, &s.cast_fwd_transpose_bytes, &s.cast_bwd_transpose_bytes}) {
    *x *= f;
  }
  // Traffic: the activations' share; a weight matrix is still read whole.
  scale_traffic(s, op, dtype, f, 1);
  if (s.gemm.m > 0) s.gemm.m = std::max(1L, (s.gemm.m + cp - 1) / cp);
  return s;
}

Op expert_shard(const Op& op, int tp, int ep, int etp, double imbalance, DType dtype) {
  Op s = op;
  const bool fc1 = op.name.size() >= 10 && op.name.compare(op.name.size() - 10, 10, "expert_fc1") == 0;
  const double work = imbalance / tp;
  const double rows = fc1 ? work * etp : work;  // fc1's input rows are gathered over expert TP
  for (double* x : {&s.fwd_flops, &s.bwd_flops, &s.recompute_flops, &s.bwd_recompute_flops}) *x *= work;
  for (double* x : {&s.saved_bytes, &s.cast_fwd_bytes, &s.cast_fwd_transpose_bytes}) *x *= rows;
  for (double* x : {&s.cast_bwd_bytes, &s.cast_bwd_transpose_bytes}) *x *= work;
  const double shard = 1.0 / (static_cast<double>(ep) * etp);
  scale_traffic(s, op, dtype, work, shard);
  s.params *= shard;
  if (s.gemm.m > 0) {
    s.gemm.batch = std::max(1L, s.gemm.batch / ep);
    s.gemm.m = std::max(1L, std::lround(static_cast<double>(s.gemm.m) * ep * etp * imbalance / tp));
    if (fc1) s.gemm.n = std::max(1L, s.gemm.n / etp);
    else s.gemm.k = std::max(1L, s.gemm.k / etp);
  }
  return s;
}

OpPlacement megatron_placement(const Op& op, bool sequence_parallel, bool vocab_parallel, int tp, double hidden_bytes,
                               long hidden, double tokens, double logits_bytes, double gather_format) {
  OpPlacement pl;
  pl.split = megatron_split(op, sequence_parallel);
  if (!vocab_parallel && op.kind == OpKind::kLoss) pl.split = TpSplit::kReplicated;
  if (tp == 1) return pl;
  if (!vocab_parallel && op.kind == OpKind::kLmHead) pl.after_fwd.all_gather = logits_bytes;
  // A column-split layer's input is the hidden state, or a narrower latent (MLA's q_up and kv_up
  // read the q and kv latents): its gradient, summed over the group, has the input's width.
  const double input_bytes =
      op.gemm.k > 0 && op.gemm.m > 0 ? hidden_bytes * static_cast<double>(op.gemm.k) / static_cast<double>(std::max(1L, hidden)) : hidden_bytes;
  if (pl.split == TpSplit::kColumn) pl.bwd.all_reduce = input_bytes;
  // SP: the sequence-split input is all-gathered again for the weight gradient.
  // Under a low-precision recipe it moves the cast input (Transformer Engine gathers the low-format
  // rowwise or columnwise data, one copy): format bytes for the dtype's.
  if (pl.split == TpSplit::kColumn && sequence_parallel && regathers_input(op)) pl.bwd.all_gather = input_bytes * gather_format;
  if (op.kind == OpKind::kLoss && pl.split == TpSplit::kSharded) pl.after_fwd.all_reduce = 2 * tokens * 4;
  if (pl.split == TpSplit::kRow || op.kind == OpKind::kEmbedding) pl.after_fwd.all_reduce = hidden_bytes;
  return pl;
}

}  // namespace hetsim
