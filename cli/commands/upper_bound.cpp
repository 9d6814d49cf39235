// File: cli/commands/upper_bound.cpp
#include "cli/commands/upper_bound.hpp"

#include "base/log.hpp"
#include "planner/hybrid/hybrid_planner.hpp"
#include "planner/strategies.hpp"

namespace hetsim::cli {

double upper_bound(const ModelSpec& model, const Cluster& cluster, const CostModel& cost, const SimOptions& options,
                   std::vector<std::string>& notes) {
  log_info("planning and simulating homogeneous references for the upper bound ...");
  const ReferencePlanner reference = [&](const ModelSpec& m, const Cluster& sub) {
    return hybrid_reference_samples_per_s(m, sub, cost, options);
  };
  notes.push_back("upper bound: each GPU type at its best per-GPU throughput on a homogeneous cluster of its own nodes "
                  "(data-parallel strategies, SPMD synthesis and hybrid plans; the same for plan and simulate, whatever "
                  "planner switches a run turns off)");
  return upper_bound_samples_per_s(model, cluster, cost, options, notes, /*synthesise=*/true, reference);
}

}  // namespace hetsim::cli
