// File: planner/spmd/spmd_judge.hpp
// The planner's last step: the best K synthesised programs (by the planner's estimate) run in the
// discrete-event simulator, and the plan is the one with the smallest simulated time. Every
// candidate keeps both figures, so users see how far the analytic estimate was off.
#pragma once

#include <string>
#include <vector>

#include "planner/spmd/spmd_planner.hpp"
#include "planner/strategies.hpp"

namespace hetsim {

struct JudgedCandidate {
  SpmdCandidate candidate;
  Evaluation evaluation;  // simulated; report.feasible false when it does not fit memory
};

struct JudgedPlan {
  SpmdProblem problem;
  SpmdPlan plan;
  std::vector<JudgedCandidate> judged;  // by estimate, best first
  int chosen = -1;                      // index into judged (smallest simulated time), -1: none fits
  double plan_time_s = 0;               // wall time: search, LP and simulations
};

// Plans `model` on `cluster` and simulates the best `k` candidates. `strategy` names the rows
// ("hetsim", "hap-faithful").
[[nodiscard]] JudgedPlan plan_and_judge(const ModelSpec& model, const Cluster& cluster, const CostModel& cost,
                                        const SpmdPlanOptions& options, int k, const SimOptions& sim,
                                        const std::string& strategy);

// Simulates one candidate (memory checked against every device first).
[[nodiscard]] Evaluation evaluate_candidate(const SpmdProblem& p, const SpmdCandidate& c, const ModelSpec& model,
                                            const Cluster& cluster, const CostModel& cost, const SearchOptions& options,
                                            const SimOptions& sim, const std::string& strategy);

}  // namespace hetsim
