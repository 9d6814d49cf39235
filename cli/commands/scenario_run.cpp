// File: cli/commands/scenario_run.cpp
#include "cli/commands/scenario_run.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <fstream>

#include <nlohmann/json.hpp>

#include "base/data_dir.hpp"
#include "base/input_error.hpp"
#include "base/log.hpp"
#include "base/text.hpp"
#include "cli/app.hpp"

namespace hetsim::cli {

std::string run_scenario_here(std::vector<std::string> args, const TempDir& scratch, bool with_plan) {
  static const bool silenced = [] {  // a worker's own output would garble the progress bar
    const int null = ::open("/dev/null", O_WRONLY);
    if (null >= 0) {
      ::dup2(null, STDOUT_FILENO);
      ::dup2(null, STDERR_FILENO);
      ::close(null);
    }
    set_log_level(LogLevel::kQuiet);
    return true;
  }();
  (void)silenced;
  nlohmann::json row{{"status", "error"}};
  std::filesystem::path report, plan;
  try {
    report = scratch.new_file("scenario", ".json");
    if (with_plan) plan = scratch.new_file("scenario", ".plan.yaml");
  } catch (const InputError& e) {
    row["error"] = e.what();
    return row.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  args.insert(args.begin(), "hetsim");
  args.insert(args.end(), {"--report", report.string()});
  if (with_plan) args.insert(args.end(), {"--emit-plan", plan.string()});
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::error_code ec;
  try {
    const int rc = run_cli(static_cast<int>(args.size()), argv.data(), true);
    if (rc != 0 && rc != kExitInfeasible) {  // infeasible is a result: its report says why
      row["error"] = "hetsim exited with " + std::to_string(rc);
    } else {
      nlohmann::json r = nlohmann::json::parse(slurp(report));
      const bool feasible = r.value("feasible", false);
      row["status"] = feasible ? "ok" : "infeasible";
      if (!feasible) row["error"] = r.value("infeasible_reason", "infeasible");
      row["iteration_time_s"] = r.value("iteration_time_s", 0.0);
      row["samples_per_s"] = r.value("samples_per_s", 0.0);
      row["mfu"] = r.value("mfu", 0.0);
      row["efficiency"] = r.value("efficiency", 0.0);
      double peak = 0;
      if (r.contains("devices")) {
        for (const nlohmann::json& d : r["devices"]) peak = std::max(peak, d.value("peak_memory_bytes", 0.0));
      }
      row["peak_memory_bytes"] = peak;
      if (with_plan && feasible) r["plan"] = slurp(plan);
      row["report"] = r.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    }
  } catch (const InputError& e) {
    row["error"] = e.what();
    if (e.machine_limit()) row["machine_limit"] = true;
  } catch (const std::bad_alloc&) {
    row["error"] = out_of_memory("the scenario").what();
    row["machine_limit"] = true;
  } catch (const std::exception& e) {
    row["error"] = std::string("internal error: ") + e.what();
  }
  std::filesystem::remove(report, ec);
  if (with_plan) std::filesystem::remove(plan, ec);
  return row.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);  // text that is not UTF-8 never ends a sweep
}

void add_scenario_options(CLI::App* cmd, ScenarioArgs& a) {
  cmd->group("");  // for programs, not people: left out of --help
  cmd->add_flag("--check", a.check, "check the command line and run nothing");
  cmd->add_flag("--with-plan", a.with_plan, "the report also holds the chosen plan");
  cmd->add_option("--row", a.row, "file the row JSON goes to");
  cmd->add_option("args", a.args, "the scenario's command line, after --")->required();
}

int run_scenario_command(const ScenarioArgs& a) {
  if (a.check) {
    try {
      check_command_line(a.args);
    } catch (const InputError& e) {  // the words `hetsim sweep` gives a bad flags alternative, for the caller to quote
      if (!a.row.empty()) std::ofstream(a.row, std::ios::trunc) << e.diagnostics().front().message << "\n";
      throw;
    }
    return 0;
  }
  if (a.row.empty()) throw InputError("--row", "", "hetsim scenario runs a scenario into the file --row names (or --check checks it)");
  std::ofstream out(a.row, std::ios::trunc);  // opened before the run: an unwritable --row is said at once
  if (!out) throw InputError(a.row, "--row", "cannot be written");
  const TempDir scratch("scenario");
  const int said = ::dup(STDERR_FILENO);  // the run silences stderr for good: what this command says comes back
  out << run_scenario_here(a.args, scratch, a.with_plan) << "\n";
  out.flush();
  if (said >= 0) {
    ::dup2(said, STDERR_FILENO);
    ::close(said);
  }
  if (!out) throw InputError(a.row, "--row", "could not be written whole (is its disk full?)");
  return 0;
}

}  // namespace hetsim::cli
