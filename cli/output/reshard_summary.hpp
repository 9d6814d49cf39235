// File: cli/output/reshard_summary.hpp
// hetsim reshard's summary (the case, the works, time, effective bandwidth, network bytes) and its
// --report JSON.
#pragma once

#include <nlohmann/json.hpp>

#include "cli/commands/reshard_command.hpp"
#include "planner/resharding/reshard_case.hpp"
#include "topologies/cluster.hpp"

namespace hetsim::cli {

// `a`: the command line as given (its texts are echoed); `t`: the simulated time.
void print_reshard(const ReshardArgs& a, const ReshardCase& c, const ReshardOutcome& r, const Cluster& cluster, double t);
[[nodiscard]] nlohmann::json reshard_json(const ReshardArgs& a, const ReshardCase& c, const ReshardOutcome& r, const Cluster& cluster,
                                          double t);

}  // namespace hetsim::cli
