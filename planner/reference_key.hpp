// File: planner/reference_key.hpp
// The text that identifies what one homogeneous reference of the upper bound is computed from:
// the sub-cluster (its node type whole: GPU figures, calibration, links, NICs, health; the
// network, a graph network's switches, links and attachments), the model and the batch it runs,
// the cost model's data (the bytes of every data file under kernels_profile/, the layer profile's
// rows) and the simulation options. Equal texts mean
// the same reference; the disk cache (base/disk_cache.hpp) adds the build ID of the code.
// Names and file paths are left out: they change nothing that is computed.
#pragma once

#include <string>

#include "kernels_profile/cost_model.hpp"
#include "sim/sim_result.hpp"
#include "topologies/cluster.hpp"
#include "workloads/model.hpp"

namespace hetsim {

// `references`: which planners the reference takes its best from (e.g. "dp, spmd, hybrid").
[[nodiscard]] std::string reference_key(const Cluster& homogeneous, const ModelSpec& model, long batch, const CostModel& cost,
                                        const SimOptions& sim, const std::string& references);

}  // namespace hetsim
