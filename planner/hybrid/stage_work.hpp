// File: planner/hybrid/stage_work.hpp
// What one GPU of a tensor-parallel group does per block (embedding, each transformer layer,
// head) for one micro-batch slice: Megatron-style tensor parallelism (column-split QKV and first
// MLP projection, row-split output projections, attention split by heads, vocabulary-parallel
// embedding, head and loss), optional sequence parallelism and activation recompute. A block is a
// list of parts, each a compute span followed by a collective over the TP group; backward runs
// the parts in reverse. Costs come from the cost model on the sharded operators.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "kernels_profile/cost_model.hpp"
#include "planner/hybrid/hybrid_plan.hpp"
#include "planner/hybrid/op_shard.hpp"
#include "workloads/model.hpp"

namespace hetsim {

struct WorkPart {
  double fwd_s = 0;
  double bwd_input_s = 0;   // gradient with respect to the inputs ("B")
  double bwd_weight_s = 0;  // gradient with respect to the weights ("W")
  TpBytes tp_fwd;           // collectives over the TP group after the forward compute
  TpBytes tp_bwd;           // collectives over the TP group after the backward compute
  double bwd_overlap_s = 0;  // weight-gradient compute tp_bwd can run under: the W of the column-split
                             // layer whose input gradient it sums (Megatron's asynchronous all-reduce)
  // Context parallelism, over each CP group (the TP ranks of one rank across the copy's cp TP groups):
  // ring attention passes K and V blocks around it under the attention's compute (`cp_hide_*_s`),
  // written as the all-gather the ring amounts to (size: the gathered K and V, cp x a rank's);
  // the backward passes K, V and their gradients. All-to-all attention (Ulysses) redistributes
  // Q, K, V and the output with blocking all-to-alls after this part's compute (`cp_fwd`, `cp_bwd`).
  double cp_ring_fwd = 0, cp_ring_bwd = 0;
  double cp_hide_fwd_s = 0, cp_hide_bwd_s = 0;
  TpBytes cp_fwd, cp_bwd;
  // Expert parallelism: the token dispatch and combine all-to-alls over each EP group (the GPUs of one
  // expert-TP rank across an expert group), and the all-gather / reduce-scatter of the routed tokens
  // over each expert-TP group, after this part's compute (forward) or its backward (their duals).
  TpBytes ep_fwd, ep_bwd, etp_fwd, etp_bwd;
  // The flex dispatcher across nodes: the all-to-all over each rail of an EP group (its GPUs of one
  // local rank), beside the one over each node's GPUs of it in ep_fwd / ep_bwd (moe_dispatch.hpp).
  double ep_rail_fwd = 0, ep_rail_bwd = 0;
  // Userbuffers (tp_comm_overlap: userbuffers): the forward TP collectives after this part's span are
  // cut into chunks pipelined with the GEMM beside them (Transformer Engine's defaults: the
  // all-gather before a column-parallel GEMM as a ring exchange of tp chunks, the reduce-scatter
  // after a row-parallel GEMM in 4). One chunk runs alone (`tp_fwd_exposed`); the rest (`tp_fwd`)
  // runs under `tp_fwd_hide_s` seconds of the GEMM, the last ones of `fwd_s` (the all-gather's GEMM
  // is the next part's: those seconds are moved here).
  TpBytes tp_fwd_exposed;
  double tp_fwd_hide_s = 0;

  bool operator==(const WorkPart&) const = default;
};

struct BlockWork {
  std::string name;  // "embedding", "layer7", "head"
  std::vector<WorkPart> parts;
  double recompute_s = 0;          // forward work repeated just before the backward (recompute)
  TpBytes recompute_tp;            // TP collectives of that repeated forward (full recompute), after it
  // Context parallelism: the repeated forward's attention exchanges K and V around the CP group
  // again (ring attention, full or selective recompute: `recompute_cp_ring` bytes beside its last
  // `recompute_cp_hide_s` seconds) and, fully recomputed, re-sends Q, K, V and the output (all-to-all).
  double recompute_cp_ring = 0, recompute_cp_hide_s = 0;
  TpBytes recompute_cp;
  // Expert parallelism: the repeated forward's dispatch and combine (full recompute, or the MoE layer
  // recomputed as a module), over the EP groups, the expert-TP groups and the flex dispatcher's rails.
  TpBytes recompute_ep, recompute_etp;
  double recompute_ep_rail = 0;
  double saved_bytes = 0;          // activations kept from forward until backward, per device
  double weight_input_bytes = 0;   // part of saved_bytes the weight gradient still needs after B
  double recompute_bytes = 0;      // activations rebuilt by recompute, held during the backward
  double offload_bytes = 0;        // activations copied to host memory and back (activation offloading)
  // Activation offloading: the time the forward waits for an earlier layer's copy out to free its place,
  // and the backward for this layer's copy back (activation_offload.hpp); in fwd_s() and bwd_s().
  double host_wait_fwd_s = 0, host_wait_bwd_s = 0;
  double params = 0;               // parameters on this device (its TP shard)
  double expert_params = 0;        // of those, routed experts' (its expert-parallel shard)
  double model_flops = 0;          // forward + backward model FLOPs of this device's share
  double output_bytes = 0;         // the block's output activation for the slice (stage boundary)
  // Later blocks reading this block's outputs and the bytes each reads for the slice (the next
  // block, and in a U-Net the skip connections); empty: the next block reads output_bytes.
  std::vector<std::pair<int, double>> consumers;
  SourceSeconds sources{};         // where the compute seconds came from
  // The first block with the same costs as this one (parts, recompute, memory and parameters; names,
  // consumers and sources aside), or -1 where this is the first: estimators cost a block once per
  // kind (a model's transformer layers are a few kinds: dense, mixture-of-experts).
  int same_as = -1;

  [[nodiscard]] double fwd_s() const;
  [[nodiscard]] double bwd_s() const;  // B + W + recompute
};

// Calls fn(consumer block, bytes) for every block reading block `b`'s outputs (its consumers,
// or the next block with output_bytes).
template <class Fn>
void for_each_consumer(const std::vector<BlockWork>& w, int b, Fn&& fn) {
  if (!w[b].consumers.empty()) {
    for (const auto& [c, bytes] : w[b].consumers) fn(c, bytes);
  } else if (b + 1 < static_cast<int>(w.size())) {
    fn(b + 1, w[b].output_bytes);
  }
}

struct StageWorkKey {
  long samples = 1;  // micro-batch slice this TP group runs (every sequence whole; cp ranks share it)
  int tp = 1;
  bool sequence_parallel = false;
  RecomputeMode recompute = RecomputeMode::kNone;
  StageProgram program = StageProgram::kMegatron;
  bool vocab_parallel = true;  // false: the LM head's logits are all-gathered and the loss replicated
  int cp = 1;        // context-parallel width: each GPU runs 1/cp of every sequence
  CpComm cp_comm = CpComm::kRing;
  int ep = 1;        // expert parallelism: each GPU holds experts / ep of every MoE layer ...
  int expert_tp = 1; // ... each split expert_tp ways
  bool userbuffers = false;  // forward TP collectives chunked with their GEMMs (WorkPart::tp_fwd_exposed)
  MoeDispatcher dispatcher = MoeDispatcher::kAllToAll;  // ep > 1: how tokens reach their experts
  int ep_nodes = 1;  // NVLink domains (nodes) an EP group spans (PipelineProgramBuilder::work sets it from the node type)
  // recompute kSelective: the modules that run again (Megatron-Core's --recompute-modules).
  RecomputeModules recompute_modules = kDefaultRecomputeModules;
  // recompute kFull: only the first `recompute_layers` layers from each of `chunk_starts` (the first
  // layers of the plan's model chunks, ascending) are recomputed; 0: every layer.
  int recompute_layers = 0;
  std::vector<int> chunk_starts{};
  // HybridPlan::activation_offload_layers: the first this many transformer layers offload their activations.
  int offload_layers = 0;
};
// The key of a TP group of width `tp` (in a copy of `cp` of them) running `samples` of each
// micro-batch under `plan`.
[[nodiscard]] StageWorkKey stage_work_key(const HybridPlan& plan, long samples, int tp, int cp = 1, int ep = 1,
                                          int expert_tp = 1);
// The key of a copy of stage `st` running `samples`.
[[nodiscard]] StageWorkKey stage_work_key(const HybridPlan& plan, long samples, const StagePlan& st);

// A program for the operators of one transformer layer (every layer runs the same), in the
// order build_op_graph gives them; empty: Megatron's.
struct LayerProgram {
  std::vector<OpPlacement> ops;
};

// Blocks in forward order: embedding, layer0 .. layer{L-1}, head, for one GPU of a TP group (of
// a copy of key.cp of them, each with 1/cp of every sequence: with causal balance, 1/cp of every
// operator's work, attention included) of `device`s computing in `dtype`: the transformer layers as `layer` places their operators
// (Megatron's TP when it is empty), the embedding and head vocabulary-parallel.
[[nodiscard]] std::vector<BlockWork> stage_block_work(const ModelSpec& model, const Device& device, DType dtype,
                                                      const CostModel& cost, const StageWorkKey& key,
                                                      const LayerProgram& layer = {});

}  // namespace hetsim
