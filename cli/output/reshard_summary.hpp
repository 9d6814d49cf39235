// File: cli/output/reshard_summary.hpp
// hetsim reshard's summary (the case, the works, time, effective bandwidth, network bytes) and its
// --report JSON.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "planner/resharding/reshard_case.hpp"
#include "topologies/cluster.hpp"

namespace hetsim::cli {

// The command line's texts, echoed as given.
struct ReshardLabels {
  std::string dtype, tensor, src, src_shape, dst, dst_shape, method, load_balance;
  unsigned long long seed = 0;
};

// `t`: the simulated time.
void print_reshard(const ReshardLabels& a, const ReshardCase& c, const ReshardOutcome& r, const Cluster& cluster, double t);
[[nodiscard]] nlohmann::json reshard_json(const ReshardLabels& a, const ReshardCase& c, const ReshardOutcome& r, const Cluster& cluster,
                                          double t);

}  // namespace hetsim::cli
