// File: planner/spmd/spmd_problem.hpp
// Builds the search problem for a model on a cluster: every operator of one global micro-batch
// (devices x the model's micro-batch samples, split by ratio as HAP splits its batch; repeated
// with gradient accumulation up to the global batch), its time on each
// GPU type from the cost model, its sizes and sharding rules; collective costs from the
// cluster's real links (alpha-beta fits of the automatically chosen algorithms); memory limits.
#pragma once

#include "kernels_profile/cost_model.hpp"
#include "planner/spmd/spmd_search.hpp"
#include "topologies/cluster.hpp"
#include "workloads/model.hpp"

namespace hetsim {

// Where GPU types with a fused attention kernel and types without share a cluster: one operator
// graph, the fused one, each type costed with its own attention kernel (kPerGpuType); or every GPU
// on the unfused path (kUnfusedEverywhere: how hetsim built SPMD problems before 2026-12-04, which
// plan files written then name).
enum class MixedAttention { kPerGpuType, kUnfusedEverywhere };

// Throws InputError for a dtype no device supports.
[[nodiscard]] SpmdProblem build_spmd_problem(const ModelSpec& model, const Cluster& cluster, const CostModel& cost,
                                             MixedAttention mixed_attention = MixedAttention::kPerGpuType);

// Shares proportional to each device's speed on the whole model (HAP's starting point).
[[nodiscard]] std::vector<double> speed_ratios(const SpmdProblem& p);

}  // namespace hetsim
