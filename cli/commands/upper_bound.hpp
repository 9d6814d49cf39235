// File: cli/commands/upper_bound.hpp
// The upper bound every command reports efficiency against (docs/planner.md): each GPU type at the
// best per-GPU throughput hetsim finds on a homogeneous cluster of its own nodes. One function,
// so `plan` and `simulate --plan` give the same bound for the same model and cluster.
#pragma once

#include <string>
#include <vector>

#include "kernels_profile/cost_model.hpp"
#include "sim/executor.hpp"
#include "topologies/cluster.hpp"
#include "workloads/model.hpp"

namespace hetsim::cli {

// Samples/s; its references are the data-parallel strategies, SPMD synthesis and the hybrid
// planner on each homogeneous cluster, whatever a planner switch of the run turns off (ablations
// share one denominator). Adds the assumptions it rests on to `notes`.
[[nodiscard]] double upper_bound(const ModelSpec& model, const Cluster& cluster, const CostModel& cost,
                                 const SimOptions& options, std::vector<std::string>& notes);

}  // namespace hetsim::cli
