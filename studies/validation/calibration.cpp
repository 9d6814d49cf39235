// File: studies/validation/calibration.cpp
#include "studies/validation/calibration.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>

#include "base/data_dir.hpp"

namespace hetsim {

std::string_view quantity_name(Quantity q) { return q == Quantity::kMemory ? "memory" : "time"; }

Quantity quantity_of(const std::string& key) {
  return key == "activation_bytes" || key == "peak_memory_bytes" ? Quantity::kMemory : Quantity::kTime;
}

namespace {

std::string joined(const std::set<std::string>& s) {
  std::string out;
  for (const std::string& x : s) {
    if (!out.empty()) out.append(" + ");
    out.append(x);
  }
  return out;
}

RunKind kind_from_name(const std::string& n) {
  for (RunKind k : {RunKind::kCollective, RunKind::kMatmul, RunKind::kLayer, RunKind::kTraining}) {
    if (run_kind_name(k) == n) return k;
  }
  return RunKind::kTraining;
}

}  // namespace

std::string default_class_name(const RunResult& r) {
  std::string s(run_kind_name(r.run->kind));
  s.append(" ").append(joined(r.scope.gpus)).append(" ").append(r.scope.name());
  return s;
}

std::vector<CalibrationClass> calibration_classes(const std::vector<RunResult>& results) {
  std::map<std::pair<std::string, Quantity>, CalibrationClass> by;
  std::map<std::pair<std::string, Quantity>, double> sum;
  for (const RunResult& r : results) {
    if (!r.failure.empty()) continue;
    const std::string name = r.run->class_name.empty() ? default_class_name(r) : r.run->class_name;
    for (const FigureResult& f : r.figures) {
      const Quantity q = quantity_of(f.key);
      CalibrationClass& c = by[{name, q}];
      if (c.rows == 0) {
        c.name = name;
        c.quantity = q;
        c.kind = r.run->kind;
        c.scope = r.scope.name();
      } else if (c.scope != r.scope.name()) {
        c.scope = "mixed";
      }
      c.gpus.insert(r.scope.gpus.begin(), r.scope.gpus.end());
      const double e = std::fabs(f.error());
      ++c.rows;
      c.max_abs_error = std::max(c.max_abs_error, e);
      sum[{name, q}] += e;
    }
  }
  std::vector<CalibrationClass> out;
  for (auto& [k, c] : by) {
    c.mean_abs_error = sum[k] / c.rows;
    out.push_back(c);
  }
  return out;
}

nlohmann::json to_json(const std::vector<CalibrationClass>& classes) {
  nlohmann::json out = nlohmann::json::array();
  for (const CalibrationClass& c : classes) {
    out.push_back({{"name", c.name},
                   {"quantity", quantity_name(c.quantity)},
                   {"kind", run_kind_name(c.kind)},
                   {"gpus", std::vector<std::string>(c.gpus.begin(), c.gpus.end())},
                   {"scope", c.scope},
                   {"rows", c.rows},
                   {"mean_abs_error", c.mean_abs_error},
                   {"max_abs_error", c.max_abs_error}});
  }
  return out;
}

std::vector<CalibrationClass> load_calibration(const std::filesystem::path& report) {
  std::ifstream in(report);
  if (!in) throw InputError(report.string(), "", "cannot open calibration file");
  std::vector<CalibrationClass> out;
  try {
    const nlohmann::json j = nlohmann::json::parse(in);
    const nlohmann::json& classes = j.at("classes");
    for (size_t i = 0; i < classes.size(); ++i) {
      const nlohmann::json& c = classes.at(i);
      CalibrationClass x;
      x.name = c.at("name").get<std::string>();
      x.quantity = c.at("quantity").get<std::string>() == "memory" ? Quantity::kMemory : Quantity::kTime;
      x.kind = kind_from_name(c.at("kind").get<std::string>());
      for (const auto& g : c.at("gpus")) x.gpus.insert(g.get<std::string>());
      x.scope = c.at("scope").get<std::string>();
      x.rows = c.at("rows").get<int>();
      x.mean_abs_error = c.at("mean_abs_error").get<double>();
      x.max_abs_error = c.at("max_abs_error").get<double>();
      if (x.rows <= 0 || !std::isfinite(x.mean_abs_error) || !std::isfinite(x.max_abs_error)) {
        throw InputError(report.string(), "classes[" + std::to_string(i) + "]", "rows and errors must be positive and finite");
      }
      out.push_back(std::move(x));
    }
  } catch (const nlohmann::json::exception& e) {
    throw InputError(report.string(), "classes", std::string("not a hetsim validate report: ") + e.what());
  }
  return out;
}

std::vector<CalibrationClass> shipped_calibration() {
  const std::filesystem::path f = data_root() / "studies" / "validation" / "calibration.json";
  std::error_code ec;
  if (!std::filesystem::is_regular_file(f, ec)) return {};
  return load_calibration(f);
}

std::string ErrorBar::text() const {
  char buf[64];
  std::snprintf(buf, sizeof buf, "±%.1f %%", 100 * of.mean_abs_error);
  std::string s(buf);
  s.append(" (").append(of.name).append(", ").append(std::to_string(of.rows)).append(" calibration row");
  if (of.rows != 1) s.append("s");
  if (!exact) s.append("; nearest class, not this setting");
  s.append(")");
  return s;
}

std::optional<ErrorBar> nearest_error_bar(const std::vector<CalibrationClass>& classes, Quantity quantity, RunKind kind,
                                          const std::set<std::string>& gpus, const std::string& scope) {
  const CalibrationClass* best = nullptr;
  int best_score = -1;
  bool best_exact = false;
  for (const CalibrationClass& c : classes) {
    if (c.quantity != quantity) continue;
    const bool same_gpus = c.gpus == gpus;
    const bool overlap = std::any_of(gpus.begin(), gpus.end(), [&](const std::string& g) { return c.gpus.contains(g); });
    const int score = (c.kind == kind ? 4 : 0) + (same_gpus ? 2 : overlap ? 1 : 0) + (c.scope == scope ? 1 : 0);
    if (score > best_score || (score == best_score && best != nullptr && c.rows > best->rows)) {
      best = &c;
      best_score = score;
      best_exact = c.kind == kind && same_gpus && c.scope == scope;
    }
  }
  if (best == nullptr) return std::nullopt;
  return ErrorBar{*best, best_exact};
}

}  // namespace hetsim
