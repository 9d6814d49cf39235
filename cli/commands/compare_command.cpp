// File: cli/commands/compare_command.cpp
#include "cli/commands/compare_command.hpp"

#include <CLI/CLI.hpp>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>

#include <nlohmann/json.hpp>

#include "base/input_error.hpp"
#include "base/temp_dir.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "cli/app.hpp"
#include "cli/common_args.hpp"
#include "cli/input_files.hpp"

namespace hetsim::cli {
namespace {

bool is_run(const std::string& w) { return w == "simulate" || w == "plan"; }

std::string joined(const std::vector<std::string>& words) {
  std::string s;
  for (const std::string& w : words) s += (s.empty() ? "" : " ") + (w.find_first_of(" '*[]") == std::string::npos ? w : "'" + w + "'");
  return s;
}

// Sends stdout (C and C++ streams alike) to /dev/null while it lives.
class SilencedStdout {
 public:
  SilencedStdout() {
    flush();
    saved_ = ::dup(STDOUT_FILENO);
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, STDOUT_FILENO);
    ::close(null);
  }
  ~SilencedStdout() {
    flush();
    ::dup2(saved_, STDOUT_FILENO);
    ::close(saved_);
  }
  SilencedStdout(const SilencedStdout&) = delete;
  SilencedStdout& operator=(const SilencedStdout&) = delete;

 private:
  static void flush() {
    std::cout.flush();
    std::fflush(stdout);
  }
  int saved_ = -1;
};

// Runs one scenario in this process with its summary silenced; returns its report JSON.
nlohmann::json run_scenario(std::vector<std::string> words, const std::string& side) {
  const TempDir scratch("compare");
  const std::filesystem::path report = scratch.new_file("report-" + side, ".json");
  words.insert(words.begin(), "hetsim");
  words.insert(words.end(), {"--report", report.string()});
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  int rc = 0;
  {
    const SilencedStdout silenced;
    rc = run_cli(static_cast<int>(argv.size()), argv.data(), true);
  }
  if (rc != 0 && rc != kExitInfeasible) throw InputError("compare", "", "scenario " + side + " (" + joined({words.begin() + 1, words.end() - 2}) + ") exited " + std::to_string(rc));
  nlohmann::json j = nlohmann::json::parse(std::ifstream(report), nullptr, false);
  if (j.is_discarded()) throw std::runtime_error("compare: scenario " + side + " wrote no report");
  return j;
}

std::string change(double a, double b) {
  if (a == 0) return b == 0 ? "=" : "new";
  const double d = (b - a) / a;
  return std::fabs(d) < 5e-4 ? "=" : format_double("%+.1f %%", 100 * d);
}

struct TypeFigures {
  double compute_s = 0, comm_s = 0, idle_s = 0, peak_bytes = 0;
  int count = 0;
};

std::map<std::string, TypeFigures> by_type(const nlohmann::json& r) {
  std::map<std::string, TypeFigures> out;
  for (const auto& d : r.value("devices", nlohmann::json::array())) {
    TypeFigures& t = out[d.value("gpu", std::string("?"))];
    t.compute_s += d.value("compute_s", 0.0);
    t.comm_s += d.value("comm_s", 0.0);
    t.idle_s += d.value("idle_s", 0.0);
    t.peak_bytes = std::max(t.peak_bytes, d.value("peak_memory_bytes", 0.0));
    ++t.count;
  }
  for (auto& [name, t] : out) {
    t.compute_s /= t.count;
    t.comm_s /= t.count;
    t.idle_s /= t.count;
  }
  return out;
}

std::map<std::string, double> path_of(const nlohmann::json& r) {
  std::map<std::string, double> out;
  for (const auto& k : r.value("critical_path", nlohmann::json::array())) out[k.value("kind", std::string())] += k.value("seconds", 0.0);
  return out;
}

}  // namespace

void add_compare_options(CLI::App* cmd, CompareArgs& a) {
  cmd->add_option("--report", a.report, "write both reports and the differences as JSON")->check(output_file());
  cmd->prefix_command();
  cmd->footer("Scenarios: A... --vs B..., each a simulate or plan command line; a B that does not start with simulate or plan "
              "is A's command line plus B's words.\n  e.g. hetsim compare simulate -c a100-v100-2x2 -m gpt3-1.3b --strategy "
              "dp-proportional --vs --set 'cluster.node_types[*].nic.bandwidth=400Gbps'");
}

int run_compare(const CompareArgs& a, const std::vector<std::string>& words) {
  const auto vs = std::find(words.begin(), words.end(), "--vs");
  std::vector<std::string> sa(words.begin(), vs), sb;
  if (vs == words.end() || sa.empty() || vs + 1 == words.end()) {
    throw InputError("compare", "", "give two scenarios: A... --vs B... (A a simulate or plan command line)");
  }
  if (!is_run(sa.front())) throw InputError("compare", "", "scenario A must start with simulate or plan, not " + in_quotes(sa.front()));
  sb.assign(vs + 1, words.end());
  if (std::find(sb.begin(), sb.end(), "--report") != sb.end() || std::find(sa.begin(), sa.end(), "--report") != sa.end()) {
    throw InputError("compare", "", "--report goes before the scenarios (hetsim compare --report R.json A... --vs B...)");
  }
  if (!is_run(sb.front())) sb.insert(sb.begin(), sa.begin(), sa.end());
  const nlohmann::json ra = run_scenario(sa, "A"), rb = run_scenario(sb, "B");
  std::cout << "A: hetsim " << joined(sa) << "\nB: hetsim " << joined(sb) << "\n\n";
  const bool fa = ra.value("feasible", false), fb = rb.value("feasible", false);
  if (!fa || !fb) {
    if (!fa) std::cout << "A is infeasible: " << ra.value("infeasible_reason", std::string()) << "\n";
    if (!fb) std::cout << "B is infeasible: " << rb.value("infeasible_reason", std::string()) << "\n";
  }
  nlohmann::json diff{{"figures", nlohmann::json::object()}, {"gpu_types", nlohmann::json::object()},
                      {"critical_path", nlohmann::json::array()}};
  if (fa && fb) {
    auto row = [](const std::string& what, const std::string& x, const std::string& y, const std::string& c) {
      std::printf("%-28s %14s %14s %10s\n", what.c_str(), x.c_str(), y.c_str(), c.c_str());
    };
    row("", "A", "B", "change");
    const double ta = ra["iteration_time_s"], tb = rb["iteration_time_s"];
    row("iteration time", format_time(ta), format_time(tb), change(ta, tb));
    const double sa_ = ra["samples_per_s"], sb_ = rb["samples_per_s"];
    row("samples/s", format_double("%.2f", sa_), format_double("%.2f", sb_), change(sa_, sb_));
    const double ma = ra["mfu"], mb = rb["mfu"], ea = ra.value("efficiency", 0.0), eb = rb.value("efficiency", 0.0);
    row("MFU", format_double("%.1f%%", 100 * ma), format_double("%.1f%%", 100 * mb), change(ma, mb));
    row("efficiency of upper bound", format_double("%.1f%%", 100 * ea), format_double("%.1f%%", 100 * eb), change(ea, eb));
    diff["figures"] = {{"iteration_time_s", {ta, tb}}, {"samples_per_s", {sa_, sb_}}, {"mfu", {ma, mb}}, {"efficiency", {ea, eb}}};
    std::cout << "\nper GPU type (means per GPU; peak memory: the largest):\n";
    const auto pa = by_type(ra), pb = by_type(rb);
    std::vector<std::string> types;
    for (const auto& [n, t] : pa) types.push_back(n);
    for (const auto& [n, t] : pb) {
      if (!pa.contains(n)) types.push_back(n);
    }
    for (const std::string& n : types) {
      const TypeFigures x = pa.contains(n) ? pa.at(n) : TypeFigures{}, y = pb.contains(n) ? pb.at(n) : TypeFigures{};
      row(n + " (" + std::to_string(x.count) + " / " + std::to_string(y.count) + ")", "", "", "");
      row("  compute", format_time(x.compute_s), format_time(y.compute_s), change(x.compute_s, y.compute_s));
      row("  communication", format_time(x.comm_s), format_time(y.comm_s), change(x.comm_s, y.comm_s));
      row("  idle", format_time(x.idle_s), format_time(y.idle_s), change(x.idle_s, y.idle_s));
      row("  peak memory", format_bytes(x.peak_bytes), format_bytes(y.peak_bytes), change(x.peak_bytes, y.peak_bytes));
      diff["gpu_types"][n] = {{"gpus", {x.count, y.count}}, {"compute_s", {x.compute_s, y.compute_s}},
                              {"comm_s", {x.comm_s, y.comm_s}}, {"idle_s", {x.idle_s, y.idle_s}},
                              {"peak_memory_bytes", {x.peak_bytes, y.peak_bytes}}};
    }
    // The kinds of task whose time on the critical path changed most.
    const auto ca = path_of(ra), cb = path_of(rb);
    std::vector<std::pair<std::string, std::pair<double, double>>> kinds;
    for (const auto& [k, s] : ca) kinds.push_back({k, {s, cb.contains(k) ? cb.at(k) : 0.0}});
    for (const auto& [k, s] : cb) {
      if (!ca.contains(k)) kinds.push_back({k, {0.0, s}});
    }
    std::stable_sort(kinds.begin(), kinds.end(), [](const auto& x, const auto& y) {
      return std::fabs(x.second.second - x.second.first) > std::fabs(y.second.second - y.second.first);
    });
    constexpr size_t kShown = 8;
    std::cout << "\ncritical path, the largest differences (time on the path by kind of task; N = any number):\n";
    for (size_t i = 0; i < kinds.size(); ++i) {
      const auto& [k, v] = kinds[i];
      diff["critical_path"].push_back({{"kind", k}, {"a_s", v.first}, {"b_s", v.second}});
      if (i < kShown) row(k.size() > 28 ? k.substr(0, 25) + "..." : k, format_time(v.first), format_time(v.second), change(v.first, v.second));
    }
    if (kinds.size() > kShown) std::cout << "(" << kinds.size() - kShown << " more kinds in --report)\n";
  }
  if (!a.report.empty()) {
    write_file(a.report,
               nlohmann::json{{"a", {{"command", joined(sa)}, {"report", ra}}}, {"b", {{"command", joined(sb)}, {"report", rb}}},
                              {"differences", diff}}
                       .dump(2) + "\n",
               "--report");
  }
  return 0;
}

}  // namespace hetsim::cli
