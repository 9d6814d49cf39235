// File: cli/main.cpp
// The hetsim executable: thin subcommands over the library. Exit codes: 0 success, 2 bad input
// (messages like compiler errors on stderr), 1 internal error.
#include <CLI/CLI.hpp>

#include <iostream>
#include <nlohmann/json.hpp>

#include "base/data_dir.hpp"
#include "base/input_error.hpp"
#include "base/log.hpp"
#include "cli/collective_command.hpp"
#include "cli/input_files.hpp"
#include "cli/validate_command.hpp"
#include "cli/summary.hpp"
#include "kernels_profile/device.hpp"
#include "planner/strategies.hpp"
#include "sim/trace.hpp"

namespace hetsim::cli {
namespace {

struct CommonArgs {
  std::string cluster = kDefaultCluster;
  std::string model = kDefaultModel;
  std::string report;
  std::string trace;
  std::string fidelity = "phase";
  std::string layer_profile;
  long global_batch = 0;
};

void add_common(CLI::App* cmd, CommonArgs& a) {
  cmd->add_option("--cluster,-c", a.cluster, "cluster: a YAML path or a shipped name (hetsim list clusters)")
      ->capture_default_str();
  cmd->add_option("--model,-m", a.model, "model: a YAML path or a shipped name (hetsim list models)")
      ->capture_default_str();
  cmd->add_option("--report", a.report, "write the report JSON here");
  cmd->add_option("--trace", a.trace, "write a Chrome trace (open in Perfetto) here");
  cmd->add_option("--fidelity", a.fidelity, "collective fidelity")
      ->check(CLI::IsMember({"phase", "step"}))
      ->capture_default_str();
  cmd->add_option("--global-batch", a.global_batch, "override the model's global batch (samples per iteration)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--layer-profile", a.layer_profile,
                  "per-layer profile CSV (kernels_profile/README.md) used instead of kernel costs where it applies");
}

SimOptions sim_options(const CommonArgs& a) {
  SimOptions o;
  o.fidelity = a.fidelity == "step" ? Fidelity::kStep : Fidelity::kPhase;
  o.record_flows = !a.trace.empty();  // link-utilisation tracks
  return o;
}

void write_json(const std::string& path, const nlohmann::json& j, const std::string& option) {
  if (!path.empty()) write_file(path, j.dump(2) + "\n", option);
}

// Every known strategy on the cluster, the best (by simulated time) reported in full.
int run_plan(const CommonArgs& a) {
  ModelSpec model = load_model_arg(a.model);
  const Cluster cluster = load_cluster_arg(a.cluster);
  if (a.global_batch > 0) model.training.global_batch = a.global_batch;
  const CostModel cost = CostModel::shipped(a.layer_profile);
  const SimOptions opts = sim_options(a);
  std::vector<std::string> notes = assumptions(model, cluster);
  print_header(std::cout, model, cluster, model.training.global_batch);

  std::vector<Evaluation> evals;
  for (const std::string& s : strategy_names()) {
    log_info("simulating " + s + " ...");
    evals.push_back(evaluate_strategy(s, model, cluster, cost, opts));
  }
  log_info("simulating homogeneous references for the upper bound ...");
  const double bound = upper_bound_samples_per_s(model, cluster, cost, opts, notes);
  std::vector<Report> reports;
  const Evaluation* best = nullptr;
  for (Evaluation& e : evals) {
    e.report.assumptions = notes;
    if (e.report.feasible) set_upper_bound(e.report, bound);
    reports.push_back(e.report);
    if (e.report.feasible && (best == nullptr || e.report.iteration_time_s < best->report.iteration_time_s)) best = &e;
  }
  print_strategy_table(std::cout, reports, cluster);
  if (best == nullptr) {
    std::cout << "\nno strategy fits this model on this cluster\n";
  } else {
    std::cout << "\nbest: " << best->report.strategy << "\n\n";
    print_run_summary(std::cout, best->report, cluster);
  }
  print_assumptions(std::cout, notes);

  nlohmann::json j = best != nullptr ? best->report.to_json() : reports.front().to_json();
  j["baselines"] = nlohmann::json::array();
  for (const Report& r : reports) {
    nlohmann::json b{{"strategy", r.strategy}, {"feasible", r.feasible}};
    if (r.feasible) b["simulated_s"] = r.iteration_time_s;
    else b["infeasible_reason"] = r.infeasible_reason;
    j["baselines"].push_back(b);
  }
  write_json(a.report, j, "--report");
  if (!a.trace.empty() && best != nullptr) {
    write_json(a.trace, chrome_trace(best->program, cluster, best->result), "--trace");
  }
  return 0;
}

int run_simulate(const CommonArgs& a, const std::string& strategy) {
  ModelSpec model = load_model_arg(a.model);
  const Cluster cluster = load_cluster_arg(a.cluster);
  if (a.global_batch > 0) model.training.global_batch = a.global_batch;
  const CostModel cost = CostModel::shipped(a.layer_profile);
  const SimOptions opts = sim_options(a);
  std::vector<std::string> notes = assumptions(model, cluster);
  print_header(std::cout, model, cluster, model.training.global_batch);
  Evaluation ev = evaluate_strategy(strategy, model, cluster, cost, opts);
  if (ev.report.feasible) {
    const double bound = upper_bound_samples_per_s(model, cluster, cost, opts, notes);
    set_upper_bound(ev.report, bound);
  }
  ev.report.assumptions = notes;
  print_run_summary(std::cout, ev.report, cluster);
  print_assumptions(std::cout, notes);
  write_json(a.report, ev.report.to_json(), "--report");
  if (!a.trace.empty() && ev.report.feasible) write_json(a.trace, chrome_trace(ev.program, cluster, ev.result), "--trace");
  return 0;
}

int run_list(const std::string& what) {
  if (what == "devices") {
    for (const std::string& n : shipped_device_names()) std::cout << n << "\n";
  } else if (what == "clusters") {
    for (const std::string& n : shipped_names("topologies")) std::cout << n << "\n";
  } else if (what == "models") {
    for (const std::string& n : shipped_names("workloads")) std::cout << n << "\n";
  } else {
    for (const std::string& n : strategy_names()) std::cout << n << "  " << strategy_description(n) << "\n";
  }
  return 0;
}

int run(int argc, char** argv) {
  CLI::App app{"hetsim: plan and simulate training on heterogeneous GPU clusters"};
  app.require_subcommand(0, 1);
  bool quiet = false;
  app.add_flag("--quiet,-q", quiet, "no progress messages on stderr");

  CommonArgs plan_args, sim_args;
  CLI::App* plan = app.add_subcommand("plan", "compare the strategies hetsim knows and report the best");
  add_common(plan, plan_args);

  CLI::App* sim = app.add_subcommand("simulate", "simulate one strategy");
  add_common(sim, sim_args);
  std::string strategy = "dp-proportional";
  sim->add_option("--strategy,-s", strategy, "strategy (hetsim list strategies)")
      ->check(CLI::IsMember(strategy_names()))
      ->capture_default_str();

  CollectiveArgs coll_args;
  CLI::App* coll = app.add_subcommand("collective", "simulate one collective or a size sweep (nccl-tests conventions)");
  add_collective_options(coll, coll_args);

  ValidateArgs val_args;
  CLI::App* val = app.add_subcommand("validate", "compare the compute cost model with kernel and layer measurements");
  add_validate_options(val, val_args);

  CLI::App* list = app.add_subcommand("list", "list shipped devices, clusters, models or strategies");
  std::string what;
  list->add_option("what", what, "devices | clusters | models | strategies")
      ->required()
      ->check(CLI::IsMember({"devices", "clusters", "models", "strategies"}));

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  if (quiet) set_log_level(LogLevel::kQuiet);
  if (*sim) return run_simulate(sim_args, strategy);
  if (*list) return run_list(what);
  if (*coll) return run_collective(coll_args);
  if (*val) return run_validate(val_args);
  return run_plan(plan_args);  // bare `hetsim` = plan on the default cluster and model
}

}  // namespace
}  // namespace hetsim::cli

int main(int argc, char** argv) {
  try {
    return hetsim::cli::run(argc, argv);
  } catch (const hetsim::InputError& e) {
    std::cout.flush();
    std::cerr << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cout.flush();
    std::cerr << "hetsim: internal error: " << e.what() << "\n";
    return 1;
  }
}
