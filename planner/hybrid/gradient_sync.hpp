// File: planner/hybrid/gradient_sync.hpp
// The end of a pipeline program's iteration: gradient synchronisation over every copy of each
// block's weights, in buckets of consecutive blocks with the same copies (all-reduce, or ZeRO
// reduce-scatter with ZeRO-1's all-gather of the updated weights after the step), overlapped with
// the last backward passes that release them; the tied embedding's all-reduce between each
// pipeline's first and last stage; the optimizer step; and each device's static memory (weights,
// gradients and optimizer state, sharded as the ZeRO stage says).
#pragma once

#include "planner/hybrid/pipeline_layout.hpp"
#include "topologies/cluster.hpp"

namespace hetsim {

void add_gradient_sync(const HybridPlan& plan, const Cluster& cluster, const StageWorkFn& work,
                       const PipelineContext& ctx, const PipelineLayout& layout, Program& program);

}  // namespace hetsim
