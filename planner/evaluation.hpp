// File: planner/evaluation.hpp
// What every planner and strategy gives back for one plan: its Program, the simulator's result
// and the report (or why it does not fit). Shared by the strategies, the SPMD judge, the hybrid
// planner and the planner's facade.
#pragma once

#include <string>

#include "sim/program.hpp"
#include "sim/report.hpp"
#include "sim/sim_result.hpp"
#include "topologies/cluster.hpp"
#include "workloads/model.hpp"

namespace hetsim {

struct Evaluation {
  Program program;     // empty when infeasible
  SimResult result;    // empty when infeasible
  Report report;       // always set; report.feasible says whether the rest is
};

// Whether a plan simulated at `a_s` seconds beats one at `b_s`: by more than a relative 1e-9.
// Closer times are a tie (they differ by the order in which floating-point sums were taken, not
// by the plans), which the plan met first (the better estimate) keeps.
[[nodiscard]] inline bool simulated_faster(double a_s, double b_s) { return a_s < b_s * (1 - 1e-9); }

// A plan that does not fit: the report names the strategy, the model, the cluster and why.
[[nodiscard]] Evaluation infeasible_evaluation(const std::string& strategy, const ModelSpec& model, const Cluster& cluster,
                                               std::string reason);
// Simulates `program` (named by its strategy) and reports it.
[[nodiscard]] Evaluation simulated_evaluation(Program program, const ModelSpec& model, const Cluster& cluster,
                                              const SimOptions& options);

}  // namespace hetsim
