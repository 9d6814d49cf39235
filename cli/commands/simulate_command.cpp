// File: cli/commands/simulate_command.cpp
#include "cli/commands/simulate_command.hpp"

#include <CLI/CLI.hpp>

#include <iostream>
#include <sstream>

#include "base/text.hpp"
#include "cli/app.hpp"
#include "studies/validation/error_bars.hpp"
#include "cli/input_files.hpp"
#include "cli/output/goodput_summary.hpp"
#include "studies/validation/mfu_ceiling.hpp"
#include "cli/output/summary.hpp"
#include "planner/planner.hpp"
#include "planner/hybrid/hybrid_plan_file.hpp"
#include "planner/hybrid/hybrid_planner.hpp"
#include "planner/spmd/plan_file.hpp"
#include "planner/spmd/spmd_judge.hpp"
#include "planner/spmd/spmd_problem.hpp"
#include "sim/trace.hpp"

namespace hetsim::cli {

void add_simulate_options(CLI::App* cmd, SimulateArgs& a) {
  add_common(cmd, a.common);
  auto* s = cmd->add_option("--strategy,-s", a.strategy, "strategy (hetsim list strategies)")
                ->check(CLI::IsMember(strategy_names()))
                ->capture_default_str();
  cmd->add_option("--plan", a.plan, "a plan written by hetsim plan --emit-plan")->excludes(s);
  cmd->add_flag("--no-upper-bound", a.no_upper_bound,
                "skip the upper bound (planning each GPU type alone, as long as hetsim plan on each): no efficiency is reported");
}

int run_simulate(const SimulateArgs& a) {
  const CommonArgs& c = a.common;
  const Inputs in = load_inputs(c);
  check_outputs_apart(c, {{"--report", c.report}, {"--trace", c.trace}}, {{"the plan", a.plan}});
  const ModelSpec& model = in.model;
  const Cluster& cluster = in.cluster;
  const CostModel& cost = in.cost;
  const SimOptions& opts = in.sim;
  std::vector<std::string> notes = assumptions(model, cluster, cost, opts.collective_interference);
  // Nothing on stdout until the inputs (plan, profiles) are read and the run is done: a rejected
  // input prints its message alone.
  std::ostringstream plan_text;
  Evaluation ev;
  long micro_batch = model.training.micro_batch;  // a hybrid plan's own micro-batch replaces the model's
  if (!a.plan.empty()) {
    PlanFileRun run = run_plan_file(a.plan, model, cluster, cost, opts, "plan " + a.plan);
    if (run.hybrid) {
      micro_batch = run.hybrid->micro_batch;
      print_hybrid_plan(plan_text, *run.hybrid, cluster);
    } else {
      print_spmd_plan(plan_text, run.problem, *run.spmd, cluster);
    }
    plan_text << "\n";
    ev = std::move(run.evaluation);
  } else {
    ev = evaluate_strategy(a.strategy, model, cluster, cost, opts);
  }
  if (ev.report.feasible && !a.no_upper_bound) set_upper_bound(ev.report, plan_upper_bound(model, cluster, cost, opts, notes));
  ev.report.assumptions.insert(ev.report.assumptions.end(), notes.begin(), notes.end());  // the run's own notes first
  print_header(std::cout, model, cluster, model.training.global_batch, micro_batch);
  std::cout << plan_text.str();
  print_run_summary(std::cout, ev.report, cluster);
  const nlohmann::json mfu_published = check_mfu(std::cout, ev.report, model, cluster);
  const nlohmann::json goodput = c.reliability ? print_goodput(std::cout, ev.report, model, cluster) : nlohmann::json();
  print_assumptions(std::cout, ev.report.assumptions);
  nlohmann::json j = ev.report.to_json();
  j["error_bars"] = error_bars_json(ev.report, cluster);
  if (!goodput.empty()) j["goodput"] = goodput;
  if (ev.report.feasible) j["mfu_published"] = mfu_published;  // null: no published figure for these GPUs
  write_json(c.report, j, "--report");
  if (!c.trace.empty() && ev.report.feasible) {
    write_file_with(c.trace, "--trace", [&](std::ostream& out) { write_chrome_trace(out, ev.program, cluster, ev.result); });
  }
  if (!ev.report.feasible) {
    std::cout.flush();
    std::cerr << "hetsim: infeasible: " << printable(ev.report.infeasible_reason) << "\n";
    return kExitInfeasible;
  }
  return 0;
}

}  // namespace hetsim::cli
