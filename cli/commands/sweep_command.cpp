// File: cli/commands/sweep_command.cpp
#include "cli/commands/sweep_command.hpp"

#include <CLI/CLI.hpp>
#include <iostream>

#include "base/build_id.hpp"
#include "cli/app.hpp"
#include "cli/commands/scenario_run.hpp"
#include "studies/sweep/sweep.hpp"

namespace hetsim::cli {
namespace {

// A study's scenarios are this program's command lines: checked and run here, keyed by its version.
ScenarioRunner cli_scenario_runner() {
  // Keyed by the code that runs them, not only the commit the build was configured at: a rebuild
  // after a change runs them again.
  return {std::string(HETSIM_VERSION) + " build " + build_id(), [](const std::vector<std::string>& args) { check_command_line(args); },
          [](const std::vector<std::string>& args, const TempDir& scratch, bool with_plan) { return run_scenario_here(args, scratch, with_plan); }};
}

}  // namespace

void add_sweep_options(CLI::App* cmd, SweepArgs& a) {
  cmd->add_option("study", a.study, "the study file (docs/formats/study.md)")->required();
  cmd->add_option("--db", a.db, "results database (default: the study file with .db)");
  cmd->add_option("--jobs,-j", a.jobs, "worker processes")->check(CLI::Range(1, 4096))->capture_default_str();
  cmd->add_flag("--retry-errors", a.retry_errors, "run again the scenarios recorded as errors");
  cmd->add_flag("--dry-run", a.dry_run, "check the study whole (paths, values, flags, inputs) and say what would run; run nothing");
}

int run_sweep(const SweepArgs& a) {
  (void)sweep(a.study, SweepOptions{a.db, a.jobs, a.retry_errors, a.dry_run}, cli_scenario_runner(), std::cout);
  return 0;
}

}  // namespace hetsim::cli
