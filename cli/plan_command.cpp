// File: cli/plan_command.cpp
#include "cli/plan_command.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <iostream>

#include "base/log.hpp"
#include "cli/input_files.hpp"
#include "cli/summary.hpp"
#include "planner/plan_file.hpp"
#include "planner/spmd_judge.hpp"
#include "sim/trace.hpp"

namespace hetsim::cli {

void add_plan_options(CLI::App* cmd, PlanArgs& a) {
  add_common(cmd, a.common);
  cmd->add_option("--emit-plan", a.emit_plan, "write the chosen plan here (hetsim simulate --plan reads it)");
  cmd->add_option("--candidates", a.candidates, "how many of the best programs to simulate")->check(CLI::Range(1, 20))->capture_default_str();
  cmd->add_option("--heuristic", a.heuristic, "A* heuristic (zero = HAP's uniform-cost search)")
      ->check(CLI::IsMember({"admissible", "zero"}))
      ->capture_default_str();
  cmd->add_option("--cost", a.cost, "planner cost model: barrier per step (HAP) or overlapped gradient sync")
      ->check(CLI::IsMember({"overlap", "barrier"}))
      ->capture_default_str();
  cmd->add_flag("--no-lp", a.no_lp, "keep shares proportional to device speed (no sharding-ratio LP)");
  cmd->add_flag("--no-sfb", a.no_sfb, "no sufficient factor broadcasting");
  cmd->add_flag("--no-grouped-collectives", a.no_grouped, "padded all-gathers only, no grouped broadcasts");
  cmd->add_flag("--no-memory-limit", a.no_memory_limit, "ignore device memory while planning (reported when exceeded)");
}

int run_plan(const PlanArgs& a) {
  const CommonArgs& c = a.common;
  const Inputs in = load_inputs(c);
  const ModelSpec& model = in.model;
  const Cluster& cluster = in.cluster;
  const CostModel& cost = in.cost;
  const SimOptions& opts = in.sim;
  std::vector<std::string> notes = assumptions(model, cluster);
  print_header(std::cout, model, cluster, model.training.global_batch);

  SpmdPlanOptions ours;
  ours.lp = !a.no_lp;
  ours.search.heuristic = a.heuristic == "zero" ? Heuristic::kZero : Heuristic::kAdmissible;
  ours.search.cost = a.cost == "barrier" ? CostMode::kBarrier : CostMode::kOverlap;
  ours.search.sfb = !a.no_sfb;
  ours.search.grouped_collectives = !a.no_grouped;
  ours.search.memory_limit = !a.no_memory_limit;
  log_info("planning (A* search + sharding-ratio LP) and simulating the best " + std::to_string(a.candidates) + " ...");
  const JudgedPlan plan = plan_and_judge(model, cluster, cost, ours, a.candidates, opts, "hetsim");
  // HAP as released: uniform-cost search, barrier after every step, no memory model.
  SpmdPlanOptions hap;
  hap.search.heuristic = Heuristic::kZero;
  hap.search.cost = CostMode::kBarrier;
  hap.search.memory_limit = false;
  log_info("planning the HAP-faithful mode ...");
  const JudgedPlan hap_plan = plan_and_judge(model, cluster, cost, hap, 1, opts, "hap-faithful");

  std::vector<Evaluation> baselines;
  for (const std::string& s : strategy_names()) {
    log_info("simulating " + s + " ...");
    baselines.push_back(evaluate_strategy(s, model, cluster, cost, opts));
  }
  // The upper bound's references are homogeneous clusters of each node type. A cluster of one
  // node type is its own reference: the best of what was just simulated.
  double bound = 0;
  if (cluster.node_types.size() == 1) {
    for (const JudgedCandidate& jc : plan.judged) bound = std::max(bound, jc.evaluation.report.samples_per_s);
    for (const Evaluation& b : baselines) bound = std::max(bound, b.report.samples_per_s);
  } else {
    log_info("planning and simulating homogeneous references for the upper bound ...");
    bound = upper_bound_samples_per_s(model, cluster, cost, opts, notes, /*synthesise=*/true);
  }

  std::vector<Report> rows;
  const Evaluation* chosen = nullptr;
  for (const JudgedCandidate& j : plan.judged) rows.push_back(j.evaluation.report);
  if (plan.chosen >= 0) chosen = &plan.judged[plan.chosen].evaluation;
  if (!plan.plan.found) {
    Report r;
    r.strategy = "hetsim";
    r.feasible = false;
    r.infeasible_reason = "no program fits the devices' memory (" + std::to_string(plan.plan.search.expanded) + " states searched)";
    rows.push_back(r);
  }
  if (!hap_plan.judged.empty()) rows.push_back(hap_plan.judged.front().evaluation.report);
  for (const Evaluation& b : baselines) rows.push_back(b.report);
  for (Report& r : rows) {
    r.assumptions = notes;
    if (r.feasible) set_upper_bound(r, bound);
  }
  print_strategy_table(std::cout, rows, cluster);
  if (chosen != nullptr) {
    Report best = chosen->report;
    best.assumptions = notes;
    set_upper_bound(best, bound);
    std::cout << "\nchosen: " << best.strategy << " (smallest simulated time of " << plan.judged.size() << " candidates)\n\n";
    print_spmd_plan(std::cout, plan.problem, plan.judged[plan.chosen].candidate, cluster);
    print_search_stats(std::cout, plan.plan, plan.plan_time_s, a.heuristic);
    std::cout << "\n";
    print_run_summary(std::cout, best, cluster);
  } else {
    std::cout << "\nno synthesised program fits this model on this cluster\n";
  }
  print_assumptions(std::cout, notes);

  nlohmann::json j = chosen != nullptr ? chosen->report.to_json() : rows.front().to_json();
  if (chosen != nullptr) {
    j["upper_bound_samples_per_s"] = bound;
    j["efficiency"] = bound > 0 ? chosen->report.samples_per_s / bound : 0;
    j["assumptions"] = notes;
  }
  j["candidates"] = nlohmann::json::array();
  for (const JudgedCandidate& jc : plan.judged) {
    nlohmann::json e{{"strategy", jc.evaluation.report.strategy}, {"estimated_s", jc.candidate.estimate_s},
                     {"feasible", jc.evaluation.report.feasible}};
    if (jc.evaluation.report.feasible) e["simulated_s"] = jc.evaluation.report.iteration_time_s;
    j["candidates"].push_back(e);
  }
  j["baselines"] = nlohmann::json::array();
  auto baseline_row = [&](const Report& r) {
    nlohmann::json b{{"strategy", r.strategy}, {"feasible", r.feasible}};
    if (r.feasible) b["simulated_s"] = r.iteration_time_s;
    else b["infeasible_reason"] = r.infeasible_reason;
    if (r.estimated_s > 0) b["estimated_s"] = r.estimated_s;
    j["baselines"].push_back(b);
  };
  if (!hap_plan.judged.empty()) baseline_row(hap_plan.judged.front().evaluation.report);
  for (const Evaluation& b : baselines) baseline_row(b.report);
  j["plan_time_s"] = plan.plan_time_s;
  j["search"] = {{"states_expanded", plan.plan.search.expanded}, {"states_generated", plan.plan.search.generated},
                 {"search_s", plan.plan.search.seconds}, {"lp_s", plan.plan.lp_seconds}, {"rounds", plan.plan.rounds}};
  write_json(c.report, j, "--report");
  if (!c.trace.empty() && chosen != nullptr) write_json(c.trace, chrome_trace(chosen->program, cluster, chosen->result), "--trace");
  if (!a.emit_plan.empty() && chosen != nullptr) {
    const PlanFile pf{model.name, cluster.name, ours.search, plan.judged[plan.chosen].candidate};
    write_file(a.emit_plan, plan_to_yaml(pf, plan.problem), "--emit-plan");
  }
  return 0;
}

}  // namespace hetsim::cli
