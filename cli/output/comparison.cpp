// File: cli/output/comparison.cpp
#include "cli/output/comparison.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "base/text.hpp"
#include "base/units.hpp"

namespace hetsim::cli {
namespace {

std::string change(double a, double b) {
  if (a == 0) return b == 0 ? "=" : "new";
  const double d = (b - a) / a;
  return std::fabs(d) < 5e-4 ? "=" : format_double("%+.1f %%", 100 * d);
}

// The change of a share (MFU, efficiency) in percentage points: 87.9 % -> 72.0 % is -15.9 pt, where a
// relative change (-18.1 %) read as a percentage of a percentage.
std::string points(double a, double b) {
  const double d = 100 * (b - a);
  return std::fabs(d) < 0.05 ? "=" : format_double("%+.1f pt", d);
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

nlohmann::json print_comparison(const nlohmann::json& ra, const nlohmann::json& rb) {
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
    row("MFU", format_double("%.1f%%", 100 * ma), format_double("%.1f%%", 100 * mb), points(ma, mb));
    if (ea > 0 || eb > 0) {  // (none without the upper bound: --no-upper-bound)
      row("efficiency of upper bound", ea > 0 ? format_double("%.1f%%", 100 * ea) : "-", eb > 0 ? format_double("%.1f%%", 100 * eb) : "-",
          ea > 0 && eb > 0 ? points(ea, eb) : change(ea, eb));
    }
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
    // Ties (where nothing changed, all of them): the larger time on the path first.
    std::stable_sort(kinds.begin(), kinds.end(), [](const auto& x, const auto& y) {
      const double dx = std::fabs(x.second.second - x.second.first), dy = std::fabs(y.second.second - y.second.first);
      if (dx != dy) return dx > dy;
      return std::max(x.second.first, x.second.second) > std::max(y.second.first, y.second.second);
    });
    constexpr size_t kShown = 8;
    std::cout << "\ncritical path, the largest differences (time on the path by kind of task; N = any number):\n";
    for (size_t i = 0; i < kinds.size(); ++i) {
      const auto& [k, v] = kinds[i];
      diff["critical_path"].push_back({{"kind", k}, {"a_s", v.first}, {"b_s", v.second}});
      // Cut in the middle: kinds that differ only at the end (".release") stay apart.
      if (i < kShown) row(k.size() > 28 ? k.substr(0, 13) + "..." + k.substr(k.size() - 12) : k, format_time(v.first), format_time(v.second), change(v.first, v.second));
    }
    if (kinds.size() > kShown) std::cout << "(" << kinds.size() - kShown << " more kinds in --report)\n";
  }
  return diff;
}

}  // namespace hetsim::cli
