// File: planner/spmd/spmd_judge.cpp
#include "planner/spmd/spmd_judge.hpp"

#include <algorithm>
#include <chrono>

#include "base/units.hpp"
#include "planner/block_costs.hpp"
#include "planner/spmd/spmd_problem.hpp"
#include "planner/spmd/spmd_program.hpp"
#include "sim/collective.hpp"

namespace hetsim {

namespace {

// Why the candidate does not fit every device's memory; empty when it fits.
std::string memory_shortfall(const SpmdProblem& p, const SpmdCandidate& c, const Cluster& cluster) {
  const std::vector<double> mem = spmd_memory(p, c);
  for (int d = 0; d < p.devices; ++d) {
    const double need = mem[d] + kRuntimeReserveBytes;
    if (need > cluster.device_of(d).memory_bytes) return memory_shortfall_text(d, cluster.device_of(d), need, "");
  }
  return {};
}

}  // namespace

Evaluation evaluate_candidate(const SpmdProblem& p, const SpmdCandidate& c, const ModelSpec& model, const Cluster& cluster,
                              const CostModel& cost, const SearchOptions& options, const SimOptions& sim,
                              const std::string& strategy) {
  if (std::string why = memory_shortfall(p, c, cluster); !why.empty()) return infeasible_evaluation(strategy, model, cluster, why);
  Evaluation ev = simulated_evaluation(spmd_to_program(p, c, model, cluster, cost, options, strategy, sim.every_step), model, cluster, sim);
  ev.report.estimated_s = c.estimate_s;
  return ev;
}

JudgedPlan plan_and_judge(const ModelSpec& model, const Cluster& cluster, const CostModel& cost,
                          const SpmdPlanOptions& options, int k, const SimOptions& sim, const std::string& strategy,
                          size_t max_flows) {
  const auto t0 = std::chrono::steady_clock::now();
  SpmdProblem problem = build_spmd_problem(model, cluster, cost);
  const double build_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  JudgedPlan out = judge_spmd_problem(std::move(problem), model, cluster, cost, options, k, sim, strategy, max_flows);
  out.plan_time_s += build_s;
  return out;
}

JudgedPlan judge_spmd_problem(SpmdProblem problem, const ModelSpec& model, const Cluster& cluster, const CostModel& cost,
                              const SpmdPlanOptions& options, int k, const SimOptions& sim, const std::string& strategy,
                              size_t max_flows) {
  const auto t0 = std::chrono::steady_clock::now();
  JudgedPlan out;
  out.problem = std::move(problem);
  out.plan = plan_spmd(out.problem, options);
  std::vector<SpmdCandidate> ranked = out.plan.candidates;
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const SpmdCandidate& a, const SpmdCandidate& b) { return a.estimate_s < b.estimate_s; });
  for (const SpmdCandidate& cand : ranked) {
    if (static_cast<int>(out.judged.size()) >= k) break;
    if (std::string why = memory_shortfall(out.problem, cand, cluster); !why.empty()) {
      out.judged.push_back({cand, infeasible_evaluation(strategy, model, cluster, why)});
      continue;
    }
    Program program = spmd_to_program(out.problem, cand, model, cluster, cost, options.search, strategy, sim.every_step);
    if (const LargestCollective big = largest_collective(program, cluster); big.flows > max_flows) {
      if (out.left_out++ == 0) {
        const auto& t = std::get<CollectiveTask>(program.tasks[static_cast<size_t>(big.task)].body);
        out.left_out_reason = "its " + std::string(collective_name(t.op)) + " over " + std::to_string(t.group.size()) +
                              " GPUs starts " + std::to_string(big.flows) + " flows at once (estimate " +
                              format_time(cand.estimate_s) + "); candidates are simulated up to " +
                              std::to_string(max_flows) + " (hetsim simulate --plan runs any)";
      }
      continue;
    }
    Evaluation ev = simulated_evaluation(std::move(program), model, cluster, sim);
    ev.report.estimated_s = cand.estimate_s;
    out.judged.push_back({cand, std::move(ev)});
  }
  for (size_t i = 0; i < out.judged.size(); ++i) {
    Evaluation& ev = out.judged[i].evaluation;
    const std::string name = out.judged.size() == 1 ? strategy : strategy + " #" + std::to_string(i + 1);
    ev.report.strategy = name;
    ev.program.strategy = name;
    const Report& r = ev.report;
    if (r.feasible && (out.chosen < 0 || simulated_faster(r.iteration_time_s, out.judged[out.chosen].evaluation.report.iteration_time_s))) {
      out.chosen = static_cast<int>(i);
    }
  }
  out.plan_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace hetsim
