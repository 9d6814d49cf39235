// File: planner/hybrid/op_shard.hpp
// One GPU's share of an operator of the model's graph when a layer is split Megatron's way: over a
// tensor-parallel group (column-, row- or head-split, or each rank its sequence shard), over
// context-parallel ranks (a share of every sequence) and over an expert-parallel group (a share of
// the experts, with the routed tokens), and the collectives a TP group runs around the operator.
// stage_work.hpp builds each block's work from these shares.
#pragma once

#include "workloads/op_graph.hpp"

namespace hetsim {

// Bytes of the collectives over a TP group at one point of a block, by kind (sizes as in
// sim/program.hpp). Under sequence parallelism the emitter runs an all-reduce as a reduce-scatter
// plus an all-gather.
struct TpBytes {
  double all_reduce = 0;
  double all_gather = 0;
  double reduce_scatter = 0;
  double all_to_all = 0;

  [[nodiscard]] int count() const;  // kinds with bytes
  [[nodiscard]] bool any() const { return count() > 0; }
  TpBytes& operator+=(const TpBytes& o);
  [[nodiscard]] TpBytes scaled(double f) const { return {all_reduce * f, all_gather * f, reduce_scatter * f, all_to_all * f}; }
  bool operator==(const TpBytes&) const = default;
};

// How one GPU of a TP group runs an operator: which way it is split and the collectives around
// it. Collectives before it (conversions of its inputs) end the compute span before it; their
// backward duals and `bwd` run after its backward; `after_fwd` runs after it and ends its span.
// kSequence: each rank takes its own 1/tp of the tokens (sequence parallelism) and keeps the whole
// weights, with no TP collective: Megatron-Core's MoE routing (router, top-k, permutations).
enum class TpSplit { kReplicated, kColumn, kRow, kSharded, kSequence };
struct OpPlacement {
  TpSplit split = TpSplit::kReplicated;
  TpBytes before_fwd, before_bwd, after_fwd, after_bwd, bwd;
};

// How Megatron splits an operator over a TP group. Norms, residuals and the operators of other
// families (convolutions, mixture-of-experts routing) stay replicated.
[[nodiscard]] TpSplit megatron_split(const Op& op, bool sequence_parallel);

// The share of `op` one GPU of a TP group of width `tp` computes. Under sequence parallelism a
// column-split layer keeps only its sequence shard of the input and gathers it again for the
// weight gradient (Korthikanti et al. 2022, Section 4.2.2), so its saved input is split too.
// Low-precision casts: a column-split layer's output gradient and a row-split layer's input are
// split; its replicated operand (the column-split input, the row-split output gradient) is cast
// whole by every rank, or, under sequence parallelism, 1/tp of it before the all-gather.
[[nodiscard]] Op tp_shard(const Op& op, TpSplit split, int tp, bool sequence_parallel);

// The share of `op` one of `cp` context-parallel ranks computes: 1/cp of the tokens of every
// sequence, and with the sequence in 2 x cp chunks (each rank the i-th and the (2cp-1-i)-th) 1/cp of
// the causal attention's work too (Megatron-Core's load balancing). Weights are whole on every rank.
[[nodiscard]] Op context_shard(const Op& op, int cp, DType dtype);

// The share of a routed expert's op one GPU computes under expert parallelism (Megatron-Core's
// all-to-all dispatcher): a TP group's tokens are split over its tp ranks, each GPU dispatches
// its T/tp tokens' k copies and receives, on average, as many for its experts / ep experts, gathered
// expert_tp ways and run on 1/expert_tp of each expert's width. So it computes 1/tp of the
// micro-batch slice's expert work whatever ep and expert_tp are, on E/ep experts with
// ep x expert_tp / tp times the rows each, and holds 1/(ep x expert_tp) of the expert weights; the
// busiest GPU gets router_imbalance times the mean.
[[nodiscard]] Op expert_shard(const Op& op, int tp, int ep, int etp, double imbalance, DType dtype);

// Megatron's collectives around `op` in a TP group: column-split layers need the gradient of
// their replicated input summed over the group (after their backward); row-split layers and the
// embedding sum their partial outputs; the vocabulary-parallel loss exchanges a max and a sum per
// token. Without the vocabulary-parallel loss, the LM head's logits are all-gathered (`logits_bytes`
// in full) and every GPU computes the whole loss. `gather_format`: the bytes an element of `op`'s
// input moves in an all-gather, per the dtype's (below 1 under a low-precision recipe).
[[nodiscard]] OpPlacement megatron_placement(const Op& op, bool sequence_parallel, bool vocab_parallel, int tp,
                                             double hidden_bytes, long hidden, double tokens, double logits_bytes,
                                             double gather_format);

}  // namespace hetsim
