// File: cli/commands/scenario_run.hpp
// One scenario of a study (a sweep's point, a sizing's mix) run inside a worker process: a
// `hetsim plan|simulate` command line run in-process with its output silenced, its outcome as a
// results row (JSON; studies/sweep/scenario_rows.hpp reads it).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "base/temp_dir.hpp"

namespace CLI {
class App;
}

namespace hetsim::cli {

// Runs `args` (plan or simulate, without --report) in this process, silencing stdout and stderr
// for good (call it in a worker only). Returns a JSON object: status (ok | infeasible | error),
// error, iteration_time_s, samples_per_s, mfu, efficiency, peak_memory_bytes and report (the
// report JSON as text). With `with_plan` (plan only), the report gains `plan`: the text of the plan
// the run chose, as `--emit-plan` writes it (YAML). The report and plan go through files made in
// `scratch` (the caller's private temporary folder, shared by its workers) and removed after.
[[nodiscard]] std::string run_scenario_here(std::vector<std::string> args, const TempDir& scratch, bool with_plan = false);

// `hetsim scenario`, a subcommand left out of --help: one scenario of a study for a program that
// reads studies but not command lines (the Python module's sweep, python/python_sweep.hpp).
//   hetsim scenario --check [--row FILE] -- ARGS...  check_command_line(ARGS): exit 0, or 2 and why
//                                                    (its first message alone into FILE)
//   hetsim scenario --row FILE [--with-plan] -- ARGS...   run_scenario_here(ARGS) into FILE
struct ScenarioArgs {
  bool check = false;
  bool with_plan = false;
  std::string row;  // where the row JSON goes (with --check: a refusal's message)
  std::vector<std::string> args;
};
void add_scenario_options(CLI::App* cmd, ScenarioArgs& a);
int run_scenario_command(const ScenarioArgs& a);

}  // namespace hetsim::cli
