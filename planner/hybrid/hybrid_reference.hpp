// File: planner/hybrid/hybrid_reference.hpp
// The hybrid planner's part in the upper bound (planner/strategies.hpp): its best simulated plan
// on a homogeneous cluster, and the closed form's weak scaling of that plan to a larger cluster
// of the same nodes, for references that would need a plan of thousands of GPUs.
#pragma once

#include <optional>
#include <vector>

#include "kernels_profile/cost_model.hpp"
#include "planner/hybrid/hybrid_plan.hpp"
#include "sim/report.hpp"
#include "topologies/cluster.hpp"
#include "workloads/model.hpp"

namespace hetsim {

struct HybridReference {
  double samples_per_s = 0;        // of the best simulated plan; 0 when none fits
  std::optional<HybridPlan> plan;  // that plan
  std::vector<HybridPlan> leading;  // the search's best plans by estimate (HybridSearch::leading)
};

// The best simulated hybrid plan on `cluster` (the hetsim flavour, one plan simulated).
[[nodiscard]] HybridReference hybrid_reference(const ModelSpec& model, const Cluster& cluster, const CostModel& cost,
                                               const SimOptions& sim);

// `plan` (made for `small`) copied over `large`, a cluster of the same node type with a whole
// number k of times small's nodes: copy c runs on GPUs c x small.gpu_count() onwards, so every
// copy sits where the plan's own GPUs sit in their part of the network. More data-parallel
// replicas, the same work per GPU.
[[nodiscard]] HybridPlan replicate_plan(const HybridPlan& plan, int copies, int gpus_per_copy);

// The closed form's per-GPU throughput on `large` over that of `plan` (the simulated best) on
// `small`: estimate(plan on small) / the least estimate on `large` of any of `plan` and
// `alternatives` weakly scaled (replicate_plan) that fits there, at most 1 (more replicas never
// make a GPU faster). Between `plan` and its copies only the data-parallel synchronisation over
// more replicas, and where the copies sit in the larger network, differ; the alternatives (the
// search's next best plans) stand for the other shapes a search on `large` could pick, where
// synchronising fewer replicas pays. 0 when it cannot be had (large is not a whole number of
// small's, or the closed form has no estimate).
[[nodiscard]] double hybrid_weak_scaling(const ModelSpec& model, const Cluster& small, const HybridPlan& plan,
                                         const std::vector<HybridPlan>& alternatives, const Cluster& large,
                                         const CostModel& cost, const SimOptions& sim);

}  // namespace hetsim
