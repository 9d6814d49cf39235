// File: planner/spmd/spmd_judge.hpp
// The planner's last step: the best K synthesised programs (by the planner's estimate) run in the
// discrete-event simulator, and the plan is the one with the smallest simulated time. Every
// candidate keeps both figures, so users see how far the analytic estimate was off.
#pragma once

#include <string>
#include <vector>

#include "kernels_profile/cost_model.hpp"
#include "planner/evaluation.hpp"
#include "planner/spmd/spmd_planner.hpp"

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
  long left_out = 0;                    // candidates better by estimate not simulated: too large
  std::string left_out_reason;          // the first of them: why
};

// A collective starting more flows at once than this is not simulated while planning: simulation
// time grows faster than the flows (SimGrid's sharing system), and an all-to-all over n GPUs
// starts n(n-1). 2^18 is about an all-to-all over 512 GPUs (261 632 flows), which simulates in
// seconds; `hetsim simulate --plan` runs any program.
inline constexpr size_t kMaxCandidateFlows = size_t{1} << 18;

// Plans `model` on `cluster` and simulates the best `k` candidates (by estimate) whose programs
// start at most `max_flows` flows in one collective. `strategy` names the rows ("hetsim",
// "hap-faithful").
[[nodiscard]] JudgedPlan plan_and_judge(const ModelSpec& model, const Cluster& cluster, const CostModel& cost,
                                        const SpmdPlanOptions& options, int k, const SimOptions& sim,
                                        const std::string& strategy, size_t max_flows = kMaxCandidateFlows);

// plan_and_judge on a problem already built (build_spmd_problem of the same model, cluster and
// cost), so that several modes share one; plan_time_s leaves its building out.
[[nodiscard]] JudgedPlan judge_spmd_problem(SpmdProblem problem, const ModelSpec& model, const Cluster& cluster,
                                            const CostModel& cost, const SpmdPlanOptions& options, int k,
                                            const SimOptions& sim, const std::string& strategy,
                                            size_t max_flows = kMaxCandidateFlows);

// Simulates one candidate (memory checked against every device first).
[[nodiscard]] Evaluation evaluate_candidate(const SpmdProblem& p, const SpmdCandidate& c, const ModelSpec& model,
                                            const Cluster& cluster, const CostModel& cost, const SearchOptions& options,
                                            const SimOptions& sim, const std::string& strategy);

}  // namespace hetsim
