// File: planner/hybrid/gradient_sync.hpp
// The end of a pipeline program's iteration: gradient synchronisation over every copy of each
// block's weights, in buckets of consecutive blocks with the same copies (all-reduce, or ZeRO
// reduce-scatter with ZeRO-1's all-gather of the updated weights after the step, or, under
// overlap_param_gather, at the start of the iteration before the forwards that need it), overlapped with
// the last backward passes that release them; the tied embedding's all-reduce between each
// pipeline's first and last stage; the optimizer step; and each device's static memory (weights,
// gradients and optimizer state, sharded as the ZeRO stage says).
#pragma once

#include "planner/hybrid/pipeline_layout.hpp"
#include "topologies/cluster.hpp"

namespace hetsim {

// One gradient bucket: consecutive blocks (in backward order) held by the same copies, and for each
// TP rank the devices holding that rank's shard (sorted): the group that synchronises it.
struct GradientBucket {
  std::vector<int> blocks;                // backward order
  std::vector<std::vector<int>> groups;   // [TP rank, or expert shard]: the devices holding it
  double params = 0;                      // parameters of one TP rank's shard
  bool expert = false;                    // routed experts' weights: groups are the copies of each expert
                                          // shard (ep x expert_tp of them), not of each TP rank
};

// The buckets of a laid-out plan, in backward order (the order gradients become ready), each up to
// ctx.bucket_params parameters unless one block alone is larger.
[[nodiscard]] std::vector<GradientBucket> gradient_buckets(const HybridPlan& plan, const StageWorkFn& work,
                                                           const PipelineContext& ctx, const PipelineLayout& layout);

// overlap_param_gather: ZeRO-1's all-gather of the updated weights of every bucket with more than
// one copy, issued at the start of the iteration in forward order, one after the other on the
// data-parallel stream (Megatron-Core dispatches each bucket's all-gather ahead of the forward that
// needs it). Returns per device and block the gather tasks that block's first forward waits for.
[[nodiscard]] std::vector<std::vector<std::vector<int>>> add_param_prefetch(const HybridPlan& plan, const Cluster& cluster,
                                                                           const StageWorkFn& work, const PipelineContext& ctx,
                                                                           const PipelineLayout& layout, Program& program);

class ComputeStreams;
// ZeRO-3 as FSDP runs it: before step `st` of stage `s` of pipeline `pi`, every TP rank gathers the
// weights of the chunk's first block to run (the last in a backward) from all copies of them (the
// same stage of every pipeline, all its data-parallel copies), after its previous compute, and its
// next kernel waits for it; the rest of the chunk's weights are gathered after it, under the step's
// compute (FSDP's prefetch of the next module as each one runs). Returns (device, task) pairs: the
// rest's gather on each device, which the kernel after the step waits for (so that a step takes at
// least its gathers). The gathered weights held at once are two blocks' (layout.gathered_bytes).
[[nodiscard]] std::vector<std::pair<int, int>> add_zero3_gather(const HybridPlan& plan, const StageWorkFn& work,
                                                                const PipelineContext& ctx, PipelineLayout& layout,
                                                                ComputeStreams& streams, int pi, int s, const PipelineStep& st);

void add_gradient_sync(const HybridPlan& plan, const Cluster& cluster, const StageWorkFn& work,
                       const PipelineContext& ctx, const PipelineLayout& layout, Program& program);

}  // namespace hetsim
