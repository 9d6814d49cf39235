// File: cli/commands/scenario_run.cpp
#include "cli/commands/scenario_run.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "base/data_dir.hpp"
#include "base/input_error.hpp"
#include "base/log.hpp"
#include "cli/app.hpp"

namespace hetsim::cli {

std::string digest(const std::string& text) {
  auto fnv = [&](uint64_t h) {
    for (unsigned char c : text) {
      h ^= c;
      h *= 1099511628211ULL;
    }
    return h;
  };
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(fnv(14695981039346656037ULL)),
                static_cast<unsigned long long>(fnv(0x9e3779b97f4a7c15ULL)));
  return buf;
}

std::string slurp(const std::filesystem::path& path) {
  check_input_file(path);  // a FIFO (a study's plan) would block the read forever
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string run_scenario_here(std::vector<std::string> args, bool with_plan) {
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
  const std::string stem = "hetsim-scenario-" + std::to_string(::getpid());
  const std::filesystem::path report = std::filesystem::temp_directory_path() / (stem + ".json");
  const std::filesystem::path plan = std::filesystem::temp_directory_path() / (stem + ".plan.json");
  args.insert(args.begin(), "hetsim");
  args.insert(args.end(), {"--report", report.string()});
  if (with_plan) args.insert(args.end(), {"--emit-plan", plan.string()});
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  nlohmann::json row{{"status", "error"}};
  std::error_code ec;
  std::filesystem::remove(report, ec);
  std::filesystem::remove(plan, ec);
  try {
    const int rc = run_cli(static_cast<int>(args.size()), argv.data(), true);
    if (rc != 0) {
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
      row["report"] = r.dump();
    }
  } catch (const InputError& e) {
    row["error"] = e.what();
  } catch (const std::exception& e) {
    row["error"] = std::string("internal error: ") + e.what();
  }
  std::filesystem::remove(report, ec);
  std::filesystem::remove(plan, ec);
  return row.dump();
}

}  // namespace hetsim::cli
