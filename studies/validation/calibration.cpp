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
  std::map<std::pair<std::string, Quantity>, std::vector<double>> errors;
  for (const RunResult& r : results) {
    if (!r.failure.empty()) continue;
    const std::string name = r.run->class_name.empty() ? default_class_name(r) : r.run->class_name;
    for (size_t i = 0; i < r.figures.size(); ++i) {
      const FigureResult& f = r.figures[i];
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
      c.scopes.insert(r.scope.name());
      c.profiles.insert(r.scope.profiles.begin(), r.scope.profiles.end());
      if (!r.scope.gemm_format.empty()) c.gemm_formats.insert(r.scope.gemm_format);
      const double e = std::fabs(r.honest_error(i));  // a fitted row's left-out error
      ++c.rows;
      c.moe = c.moe || r.scope.moe;
      c.low_precision_gemms = c.low_precision_gemms || r.scope.low_precision_gemms;
      c.fp32_gemms = c.fp32_gemms || r.scope.fp32_gemms;
      c.mamba = c.mamba || r.scope.mamba;
      c.max_abs_error = std::max(c.max_abs_error, e);
      errors[{name, q}].push_back(e);
    }
  }
  std::vector<CalibrationClass> out;
  for (auto& [k, c] : by) {
    std::vector<double>& e = errors[k];
    double sum = 0;
    for (double x : e) sum += x;
    c.mean_abs_error = sum / c.rows;
    std::sort(e.begin(), e.end());
    const size_t rank = static_cast<size_t>(std::ceil(0.9 * static_cast<double>(e.size())));  // nearest rank, 1-based
    c.p90_abs_error = e[std::max<size_t>(rank, 1) - 1];
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
                   {"max_abs_error", c.max_abs_error},
                   {"p90_abs_error", c.p90_abs_error},
                   {"moe", c.moe},
                   {"low_precision_gemms", c.low_precision_gemms},
                   {"fp32_gemms", c.fp32_gemms},
                   {"mamba", c.mamba},
                   {"scopes", std::vector<std::string>(c.scopes.begin(), c.scopes.end())},
                   {"profiles", std::vector<std::string>(c.profiles.begin(), c.profiles.end())},
                   {"gemm_formats", std::vector<std::string>(c.gemm_formats.begin(), c.gemm_formats.end())}});
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
      // Reports written before these keys: the max stands for the percentile, dense for the setting.
      x.p90_abs_error = c.contains("p90_abs_error") ? c.at("p90_abs_error").get<double>() : x.max_abs_error;
      x.moe = c.contains("moe") && c.at("moe").get<bool>();
      x.low_precision_gemms = c.contains("low_precision_gemms") && c.at("low_precision_gemms").get<bool>();
      x.fp32_gemms = c.contains("fp32_gemms") && c.at("fp32_gemms").get<bool>();
      x.mamba = c.contains("mamba") && c.at("mamba").get<bool>();
      // Reports written before these keys: the one scope, profiles unknown.
      if (c.contains("scopes")) {
        for (const auto& v : c.at("scopes")) x.scopes.insert(v.get<std::string>());
      }
      if (c.contains("profiles")) {
        for (const auto& v : c.at("profiles")) x.profiles.insert(v.get<std::string>());
      }
      if (c.contains("gemm_formats")) {
        for (const auto& v : c.at("gemm_formats")) x.gemm_formats.insert(v.get<std::string>());
      }
      if (x.rows <= 0 || !std::isfinite(x.mean_abs_error) || !std::isfinite(x.max_abs_error) || !std::isfinite(x.p90_abs_error) ||
          x.mean_abs_error < 0 || x.max_abs_error < 0 || x.p90_abs_error < 0) {
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
  std::snprintf(buf, sizeof buf, "±%.1f %%", 100 * of.p90_abs_error);
  std::string s(buf);
  s.append(" (90th percentile of |error| over ").append(std::to_string(of.rows)).append(" calibration row");
  if (of.rows != 1) s.append("s");
  s.append(": ").append(of.name);
  if (!sibling.empty()) s.append("; rows on ").append(sibling).append(", under the profile in force here");
  else if (other_stack) s.append("; nearest class, rows of another calibration profile");
  else if (!exact) s.append("; nearest class, not this setting");
  s.append(")");
  return s;
}

std::optional<ErrorBar> nearest_error_bar(const std::vector<CalibrationClass>& classes, Quantity quantity, RunKind kind,
                                          const std::set<std::string>& gpus, const std::string& scope, bool moe,
                                          bool low_precision, bool fp32, const std::set<std::string>& profiles,
                                          const std::string& gemm_format, bool mamba) {
  // Rows of the same software stack: the class's runs were predicted with every profile in force
  // here (a class or a prediction that does not say is not held to it).
  const auto same_stack = [&](const CalibrationClass& c) {
    return profiles.empty() || c.profiles.empty() || std::includes(c.profiles.begin(), c.profiles.end(), profiles.begin(), profiles.end());
  };
  // The same GEMM format (a class or a prediction that does not say is not held to it).
  const auto same_format = [&](const CalibrationClass& c) {
    return gemm_format.empty() || c.gemm_formats.empty() || c.gemm_formats.contains(gemm_format);
  };
  const CalibrationClass* best = nullptr;
  int best_score = -1;
  for (const CalibrationClass& c : classes) {
    // A hybrid model's rows speak for no other model, and other models' rows not for a hybrid one (its
    // scan kernels are neither), whatever else its class shares.
    if (c.quantity != quantity || c.kind != kind || gpus.empty() || c.mamba != mamba) continue;
    if (!std::all_of(gpus.begin(), gpus.end(), [&](const std::string& g) { return c.gpus.contains(g); })) continue;
    const bool own_rows = std::none_of(gpus.begin(), gpus.end(), [&](const std::string& g) { return c.borrowed.contains(g); });
    const int score = (c.moe == moe ? 64 : 0) + (c.low_precision_gemms == low_precision ? 32 : 0) + (c.fp32_gemms == fp32 ? 16 : 0) +
                      (same_format(c) ? 8 : 0) + (same_stack(c) ? 4 : 0) + (c.has_scope(scope) ? 2 : 0) + (own_rows ? 1 : 0);
    // Of classes equally near: more rows, then the wider bar (not the more flattering one).
    if (score > best_score || (score == best_score && (c.rows > best->rows || (c.rows == best->rows && c.p90_abs_error > best->p90_abs_error)))) {
      best = &c;
      best_score = score;
    }
  }
  if (best == nullptr) return std::nullopt;
  // A time bar is not borrowed across dense and mixture-of-experts runs: their time goes to other
  // things (expert all-to-alls, grouped GEMMs, routing), and so do their errors (B300's MoE rows are
  // within 5.2 %, GB300's dense rows off by up to 30 %). missing_error_bar_text says so.
  if (quantity == Quantity::kTime && best->moe != moe) return std::nullopt;
  // The class covers every GPU type of the prediction (it may cover others too: rows on A100 and
  // H100 speak for an H100 prediction); exact when scope, setting and stack are the prediction's as well.
  const bool setting = best->has_scope(scope) && best->moe == moe && best->low_precision_gemms == low_precision && best->fp32_gemms == fp32 &&
                       same_format(*best);
  return ErrorBar{*best, setting && same_stack(*best), setting && !same_stack(*best)};
}

std::string missing_error_bar_text(const std::vector<CalibrationClass>& classes, Quantity quantity, RunKind kind,
                                   const std::set<std::string>& gpus, bool moe) {
  const CalibrationClass* other = nullptr;
  for (const CalibrationClass& c : classes) {
    if (c.quantity != quantity || c.kind != kind || gpus.empty() || c.moe == moe || c.mamba) continue;
    if (!std::all_of(gpus.begin(), gpus.end(), [&](const std::string& g) { return c.gpus.contains(g); })) continue;
    if (other == nullptr || c.rows > other->rows) other = &c;
  }
  if (other == nullptr) return "no calibration for these GPU types in training runs";
  return std::string("no calibration for this GPU and setting (its calibration rows are of ") +
         (moe ? "dense" : "mixture-of-experts") + " runs only: " + other->name + ")";
}

}  // namespace hetsim
