// File: planner/spmd/spmd_judge.cpp
#include "planner/spmd/spmd_judge.hpp"

#include <algorithm>
#include <chrono>

#include "base/units.hpp"
#include "planner/block_costs.hpp"
#include "planner/spmd/spmd_problem.hpp"
#include "planner/spmd/spmd_program.hpp"

namespace hetsim {

Evaluation evaluate_candidate(const SpmdProblem& p, const SpmdCandidate& c, const ModelSpec& model, const Cluster& cluster,
                              const CostModel& cost, const SearchOptions& options, const SimOptions& sim,
                              const std::string& strategy) {
  const std::vector<double> mem = spmd_memory(p, c);
  for (int d = 0; d < p.devices; ++d) {
    const double need = mem[d] + kRuntimeReserveBytes;
    const double have = cluster.device_of(d).memory_bytes;
    if (need > have) {
      return infeasible_evaluation(strategy, model, cluster,
                                   "gpu" + std::to_string(d) + " (" + cluster.device_of(d).name + ") needs " +
                                       format_bytes(need) + " but has " + format_bytes(have) + ": short by " +
                                       format_bytes(need - have));
    }
  }
  Evaluation ev = simulated_evaluation(spmd_to_program(p, c, model, cluster, cost, options, strategy, sim.every_step), model, cluster, sim);
  ev.report.estimated_s = c.estimate_s;
  return ev;
}

JudgedPlan plan_and_judge(const ModelSpec& model, const Cluster& cluster, const CostModel& cost,
                          const SpmdPlanOptions& options, int k, const SimOptions& sim, const std::string& strategy) {
  const auto t0 = std::chrono::steady_clock::now();
  JudgedPlan out;
  out.problem = build_spmd_problem(model, cluster, cost);
  out.plan = plan_spmd(out.problem, options);
  std::vector<SpmdCandidate> ranked = out.plan.candidates;
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const SpmdCandidate& a, const SpmdCandidate& b) { return a.estimate_s < b.estimate_s; });
  if (static_cast<int>(ranked.size()) > k) ranked.resize(static_cast<size_t>(k));
  for (size_t i = 0; i < ranked.size(); ++i) {
    const std::string name = ranked.size() == 1 ? strategy : strategy + " #" + std::to_string(i + 1);
    out.judged.push_back({ranked[i], evaluate_candidate(out.problem, ranked[i], model, cluster, cost, options.search, sim, name)});
    const Report& r = out.judged.back().evaluation.report;
    if (r.feasible && (out.chosen < 0 || r.iteration_time_s < out.judged[out.chosen].evaluation.report.iteration_time_s)) {
      out.chosen = static_cast<int>(i);
    }
  }
  out.plan_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace hetsim
