// File: planner/spmd/spmd_program.hpp
// Turns a synthesised SPMD program (a rule per operator, per-device shares) into the simulator's
// Program: per device, forward then backward of every operator at its share, for each of the
// iteration's micro-steps; layout conversions as collectives over all devices (uneven all-gathers
// and reduce-scatters carry each device's shard); gradient synchronisation after the last
// micro-step's backward of each operator, overlapping the rest of the backward pass; then the
// optimizer step. Consecutive operators with no collective between them form one compute task.
// Identical micro-steps are held once or twice, not once each, unless `every_step` (see the .cpp).
#pragma once

#include "kernels_profile/cost_model.hpp"
#include "planner/spmd/spmd_planner.hpp"
#include "sim/program.hpp"
#include "topologies/cluster.hpp"
#include "workloads/model.hpp"

namespace hetsim {

[[nodiscard]] Program spmd_to_program(const SpmdProblem& p, const SpmdCandidate& candidate, const ModelSpec& model,
                                      const Cluster& cluster, const CostModel& cost, const SearchOptions& options,
                                      const std::string& strategy, bool every_step = false);

// Bytes each device holds (model state and one micro-step's activations) under the candidate.
[[nodiscard]] std::vector<double> spmd_memory(const SpmdProblem& p, const SpmdCandidate& candidate);

}  // namespace hetsim
