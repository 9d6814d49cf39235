// File: planner/hybrid/partial_recompute.hpp
// Megatron-Core's recompute of parts of a model (megatron/core/transformer/transformer_config.py),
// internal to stage_block_work (stage_work.cpp): by layer (--recompute-granularity full
// --recompute-method block --recompute-num-layers N: the first N layers of each model chunk), and by
// module (--recompute-granularity selective --recompute-modules): which operators of a transformer
// layer run again before its backward, which activations that frees, and which collectives run again
// with them:
//
//   layernorm       the norms before the attention and the MLP whose output a separate module reads
//                   (its output discarded after the forward, rebuilt before the backward): the
//                   bytes its readers keep. Transformer Engine fuses a norm into the one linear layer
//                   reading it (the attention's QKV, a dense MLP's first projection): not those.
//   moe_act         the experts' activation: its output, which the second expert GEMM keeps.
//   mla_up_proj     multi-head latent attention's up projections (with their norms): their inputs'
//                   copies and the queries, keys and values the attention core keeps; the compressed
//                   latents stay.
//   mlp             a dense layer's MLP (its norm where fused into it), with its TP collectives:
//                   everything it keeps but its input.
//   shared_experts  the shared experts, with their TP collectives: everything they keep.
//   moe             the MoE layer whole (router, dispatch, experts, combine, shared experts), with its
//                   expert and TP collectives: everything it keeps but its input (the router's).
// core_attn, the attention core, stays stage_block_work's own (Korthikanti et al.).
#pragma once

#include <vector>

#include "planner/hybrid/stage_work.hpp"
#include "workloads/op_graph.hpp"

namespace hetsim {

// check_hybrid_plan's rules for recompute by module and by layer: Megatron-Core's modules need the parts
// its TransformerConfig checks for (moe_act experts, mla_up_proj latent attention, modules other than
// core_attn a pre-norm family, moe not beside combined 1F1B); the block method counts layers from each
// model chunk's first, so every pipeline must cut them alike.
[[nodiscard]] std::vector<PlanProblem> recompute_problems(const HybridPlan& plan, const ModelSpec& model);

// One operator of the graph as stage_block_work costed it on one GPU of its TP group.
struct OpForward {
  double seconds = 0;      // its forward
  double saved_bytes = 0;  // what it keeps for the backward (its shard)
  TpBytes tp;              // the TP collectives before and after it in the forward, whole
  TpBytes ep, etp;         // the expert collectives before and after it (the dispatch and combine)
  double ep_rail = 0;
};

// The block method: each layer's block from `full` (every layer recomputed) where the layer is among
// the first key.recompute_layers of its chunk (key.chunk_starts), from `none` otherwise.
[[nodiscard]] std::vector<BlockWork> recompute_first_layers(std::vector<BlockWork> none, const std::vector<BlockWork>& full,
                                                            const StageWorkKey& key);

// Adds the recompute of `modules` (other than core_attn) to the transformer layers' blocks:
// recompute_s, recompute_tp and recompute_bytes grow, saved_bytes shrinks. `ops` is indexed as
// `graph.ops`; block b holds layer b - 1.
void add_module_recompute(const OpGraph& graph, const std::vector<OpForward>& ops, RecomputeModules modules,
                          std::vector<BlockWork>& blocks);

}  // namespace hetsim
