// File: planner/hybrid/stage_work.hpp
// What one GPU of a tensor-parallel group does per block (embedding, each transformer layer,
// head) for one micro-batch slice: Megatron-style tensor parallelism (column-split QKV and first
// MLP projection, row-split output projections, attention split by heads, vocabulary-parallel
// embedding, head and loss), optional sequence parallelism and activation recompute. A block is a
// list of parts, each a compute span followed by a collective over the TP group; backward runs
// the parts in reverse. Costs come from the cost model on the sharded operators.
#pragma once

#include <string>
#include <vector>

#include "kernels_profile/cost_model.hpp"
#include "planner/hybrid/hybrid_plan.hpp"
#include "workloads/model.hpp"

namespace hetsim {

struct WorkPart {
  double fwd_s = 0;
  double bwd_input_s = 0;   // gradient with respect to the inputs ("B")
  double bwd_weight_s = 0;  // gradient with respect to the weights ("W")
  double tp_fwd_bytes = 0;  // all-reduce over the TP group after the forward compute (0: none)
  double tp_bwd_bytes = 0;  // all-reduce over the TP group after the backward compute (0: none)
};

struct BlockWork {
  std::string name;  // "embedding", "layer7", "head"
  std::vector<WorkPart> parts;
  double recompute_s = 0;          // forward work repeated just before the backward (recompute)
  double saved_bytes = 0;          // activations kept from forward until backward, per device
  double weight_input_bytes = 0;   // part of saved_bytes the weight gradient still needs after B
  double recompute_bytes = 0;      // activations rebuilt by recompute, held during the backward
  double params = 0;               // parameters on this device (its TP shard)
  double model_flops = 0;          // forward + backward model FLOPs of this device's share
  double output_bytes = 0;         // the block's output activation for the slice (stage boundary)
  SourceSeconds sources{};         // where the compute seconds came from

  [[nodiscard]] double fwd_s() const;
  [[nodiscard]] double bwd_s() const;  // B + W + recompute
};

struct StageWorkKey {
  long samples = 1;  // micro-batch slice this TP group runs
  int tp = 1;
  bool sequence_parallel = false;
  RecomputeMode recompute = RecomputeMode::kNone;
};

// Blocks in forward order: embedding, layer0 .. layer{L-1}, head, for one GPU of a TP group of
// `device`s computing in `dtype`.
[[nodiscard]] std::vector<BlockWork> stage_block_work(const ModelSpec& model, const Device& device, DType dtype,
                                                      const CostModel& cost, const StageWorkKey& key);

}  // namespace hetsim
