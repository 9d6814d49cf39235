// File: cli/app.cpp
#include "cli/app.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <iostream>
#include <sstream>

#include "base/build_id.hpp"
#include "base/data_dir.hpp"
#include "base/input_error.hpp"
#include "base/log.hpp"
#include "base/text.hpp"
#include "cli/common_args.hpp"
#include "cli/commands/collective_command.hpp"
#include "cli/commands/compare_command.hpp"
#include "cli/commands/plan_command.hpp"
#include "cli/commands/report_command.hpp"
#include "cli/commands/reshard_command.hpp"
#include "cli/commands/scenario_run.hpp"
#include "cli/commands/simulate_command.hpp"
#include "cli/commands/size_command.hpp"
#include "cli/commands/sweep_command.hpp"
#include "cli/commands/validate_command.hpp"
#include "cli/commands/calibrate_command.hpp"
#include "kernels_profile/device.hpp"
#include "planner/planner.hpp"
#include "planner/strategies.hpp"
#include "topologies/cluster.hpp"

namespace hetsim::cli {
namespace {

int run_list(const std::string& what) {
  if (what.empty()) throw InputError("hetsim list", "", "say what to list: devices, clusters, models or strategies");
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

}  // namespace

namespace {

// A refusal the planner or the simulator pins on the model's training.global_batch (too many passes
// or tasks to simulate), said of --global-batch where that option set the batch.
template <class Run>
int naming_batch_flag(const CommonArgs& c, Run&& run) {
  try {
    return run();
  } catch (const InputError& e) {
    if (c.global_batch <= 0) throw;
    if (std::optional<InputError> moved = e.relocated("training.global_batch", Diagnostic{"--global-batch", 0, 0, "", ""})) throw *moved;
    throw;
  }
}

int parse_and_run(int argc, char** argv, bool throw_parse_errors, bool parse_only) {
  CLI::App app{"hetsim: plan and simulate training on heterogeneous GPU clusters"};
  app.require_subcommand(0, 1);
  app.footer("Exit codes: 0 success; 1 internal error (a bug: please report it); 2 bad input, said like a compiler error "
             "(file:line:col), or a resource limit (a cluster over " + std::to_string(kMaxClusterGpus) +
             " GPUs, a --set over 64 KiB, a run over the tasks or pipeline passes hetsim simulates, memory or ulimit -v); "
             "3 infeasible: simulate's run or every program plan made does not fit, or a compare scenario's (the summary, stderr and the report's "
             "infeasible_reason say why); 128+N stopped by signal N (a sweep or sizing keeps what finished).");
  bool quiet = false;
  app.add_flag("--quiet,-q", quiet, "no progress messages on stderr");
  app.set_version_flag("--version", std::string("hetsim ") + HETSIM_VERSION + " (version+commit at configure time; build " +
                                        (build_id().empty() ? std::string("id unknown") : build_id()) + ")");

  PlanArgs plan_args;
  CLI::App* plan = app.add_subcommand("plan", "synthesise, simulate and compare programs; report the best");
  add_plan_options(plan, plan_args);

  SimulateArgs sim_args;
  CLI::App* sim = app.add_subcommand("simulate", "simulate one strategy or an emitted plan");
  add_simulate_options(sim, sim_args);

  CollectiveArgs coll_args;
  CLI::App* coll = app.add_subcommand("collective", "simulate one collective or a size sweep (nccl-tests conventions)");
  add_collective_options(coll, coll_args);

  ReshardArgs reshard_args;
  CLI::App* reshard = app.add_subcommand("reshard", "simulate one cross-mesh resharding (a microbenchmark)");
  add_reshard_options(reshard, reshard_args);

  ValidateArgs val_args;
  CLI::App* val = app.add_subcommand("validate", "compare predictions with measurements: kernel tables, layers, or published runs (--runs)");
  add_validate_options(val, val_args);

  CalibrateArgs cal_args;
  CLI::App* cal = app.add_subcommand("calibrate", "fit a calibration profile to measured runs, with leave-one-source-out errors");
  add_calibrate_options(cal, cal_args);

  CLI::App* list = app.add_subcommand("list", "list shipped devices, clusters, models or strategies");
  std::string what;
  list->add_option("what", what, "what to list, one of them (required: hetsim list alone says so, exit 2)")
      ->check(CLI::IsMember({"devices", "clusters", "models", "strategies"}));

  SweepArgs sweep_args;
  CLI::App* sweep = app.add_subcommand("sweep", "run every scenario of a study (what-if, ablation) into a SQLite database");
  add_sweep_options(sweep, sweep_args);

  SizeArgs size_args;
  CLI::App* size = app.add_subcommand("size", "which cluster to buy or rent: the Pareto front of time to train against cost");
  add_size_options(size, size_args);

  CompareArgs compare_args;
  CLI::App* compare = app.add_subcommand("compare", "two scenarios side by side: what changes if ...");
  add_compare_options(compare, compare_args);

  ReportArgs report_args;
  CLI::App* report = app.add_subcommand("report", "print (or plot) the results of a study's database");
  add_report_options(report, report_args);

  ScenarioArgs scenario_args;
  CLI::App* scenario = app.add_subcommand("scenario", "one scenario of a study, for programs (python/python_sweep.hpp)");
  add_scenario_options(scenario, scenario_args);

  // CLI11 answers --version before it looks at the rest: anything else given with it is refused
  // here, not silently ignored.
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (std::find(args.begin(), args.end(), "--version") != args.end()) {
    for (const std::string& a : args) {
      if (a == "--version" || a == "-q" || a == "--quiet") continue;
      if (throw_parse_errors) throw InputError("hetsim", "", "--version takes nothing else, got " + printable(a));
      std::cerr << "hetsim: error: --version takes nothing else, got " << printable(a) << "\n";
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (throw_parse_errors && parse_only && e.get_exit_code() == 0) {
      throw InputError("hetsim", "", "asks for help, which runs nothing");
    }
    if (throw_parse_errors && e.get_exit_code() != 0) throw InputError("hetsim", "", e.what());
    // CLI11 quotes what was typed (an unknown option, a value off its list): escaped line by line,
    // so a terminal escape sequence in an argument is shown, never obeyed.
    app.failure_message([](const CLI::App* a, const CLI::Error& err) {
      std::string out;
      std::istringstream lines(CLI::FailureMessage::simple(a, err));
      for (std::string line; std::getline(lines, line);) out += printable(line) + "\n";
      return out;
    });
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  if (parse_only) {
    // A scenario of a sweep or sizing: the runner gives it its report (kept in the database) and
    // it writes no file of its own; what it reads (--set edits, batches, a layer profile) loads.
    const bool planning = *plan || app.get_subcommands().empty();  // bare `hetsim` plans
    if (*sim || planning) {
      const CommonArgs& common = *sim ? sim_args.common : plan_args.common;
      for (const auto& [option, value] : {std::pair{"--report", common.report}, std::pair{"--trace", common.trace},
                                          std::pair{"--emit-plan", planning ? plan_args.emit_plan : std::string()}}) {
        if (!value.empty()) {
          throw InputError(option, "", "a scenario's report goes to the results database and it writes no file of its own; leave " +
                                           std::string(option) + " out");
        }
      }
      const Inputs in = load_inputs(common);
      if (*sim && !sim_args.plan.empty()) check_plan_file(sim_args.plan, in.model, in.cluster, in.cost);
      if (planning && !plan_args.keep_plan.empty()) check_kept_plan_file(plan_args.keep_plan, in.model, in.cluster, in.cost);
    }
    return 0;
  }
  if (quiet) set_log_level(LogLevel::kQuiet);
  if (*sim) return naming_batch_flag(sim_args.common, [&] { return run_simulate(sim_args); });
  if (*list) return run_list(what);
  if (*coll) return run_collective(coll_args);
  if (*val) return run_validate(val_args);
  if (*cal) return run_calibrate(cal_args);
  if (*reshard) return run_reshard(reshard_args);
  if (*sweep) return run_sweep(sweep_args);
  if (*report) return run_report(report_args);
  if (*size) return run_size(size_args);
  if (*compare) return run_compare(compare_args, compare->remaining());
  if (*scenario) return run_scenario_command(scenario_args);
  return naming_batch_flag(plan_args.common, [&] { return run_plan(plan_args); });  // bare `hetsim` = plan on the default cluster and model
}

}  // namespace

int run_cli(int argc, char** argv, bool throw_parse_errors) { return parse_and_run(argc, argv, throw_parse_errors, false); }

void check_command_line(std::vector<std::string> args) {
  args.insert(args.begin(), "hetsim");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  (void)parse_and_run(static_cast<int>(args.size()), argv.data(), true, true);
}

}  // namespace hetsim::cli

