// File: planner/hybrid/megatron_args.hpp
// A hybrid plan as the Megatron-LM / Megatron-Bridge command-line arguments that run it
// (hetsim plan --emit megatron-args), so that a user can run what hetsim chose.
#pragma once

#include <string>

#include "planner/hybrid/hybrid_plan.hpp"
#include "topologies/cluster.hpp"
#include "workloads/model.hpp"

namespace hetsim {

struct MegatronArgs {
  std::string args;     // "--tensor-model-parallel-size 4 --pipeline-model-parallel-size 8 ..."; empty when not expressible
  std::string why_not;  // why Megatron cannot run this plan as it is (several GPU types, stages of
                        // different widths, a schedule it lacks, ...); empty when `args` is set
};

// Megatron runs one plan shape on every GPU: one GPU type, every pipeline alike, every stage of
// the same TP, CP, EP, expert-TP and data-parallel width, the same chunk count on every stage, the
// 1F1B or interleaved schedule and its own tensor parallelism. Layers split unevenly, or the
// embedding or the loss as chunks of their own, are written as --pipeline-model-parallel-layout.
[[nodiscard]] MegatronArgs megatron_args(const HybridPlan& plan, const ModelSpec& model, const Cluster& cluster);

}  // namespace hetsim
