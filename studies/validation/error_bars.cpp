// File: studies/validation/error_bars.cpp
#include "studies/validation/error_bars.hpp"

#include <ostream>
#include <set>

#include "kernels_profile/calibration_profile.hpp"
#include "studies/validation/calibration.hpp"

namespace hetsim {
namespace {

// The GPU types that work in this report, and how many nodes the cluster has.
RunScope scope_of(const Report& r, const Cluster& cluster) {
  RunScope s;
  s.gpu_count = 0;
  std::set<int> nodes;
  for (size_t g = 0; g < r.devices.size() && g < static_cast<size_t>(cluster.gpu_count()); ++g) {
    if (r.devices[g].compute_s <= 0) continue;
    s.gpus.insert(r.devices[g].gpu);
    nodes.insert(cluster.gpus[g].node);
    ++s.gpu_count;
  }
  s.nodes = static_cast<int>(nodes.size());
  return s;
}

const std::vector<CalibrationClass>& classes() {
  static const std::vector<CalibrationClass> shipped = shipped_calibration();
  return shipped;
}

std::optional<ErrorBar> bar(const Report& r, const Cluster& cluster, Quantity q) {
  const RunScope s = scope_of(r, cluster);
  return nearest_error_bar(classes(), q, RunKind::kTraining, s.gpus, s.name(), r.moe, r.low_precision_gemms, r.fp32_gemms,
                           profiles_in_force(s.gpus));
}

const char* const kNoClass = "no calibration for these GPU types in training runs";
const char* const kNoCalibration = "unknown (no shipped calibration: studies/validation/calibration.json)";

nlohmann::json to_json(const std::optional<ErrorBar>& b) {
  if (!b) return nullptr;
  return {{"class", b->of.name},
          {"rows", b->of.rows},
          {"mean_abs_error", b->of.mean_abs_error},
          {"max_abs_error", b->of.max_abs_error},
          {"p90_abs_error", b->of.p90_abs_error},
          {"exact_match", b->exact},
          {"text", b->text()}};
}

}  // namespace

nlohmann::json error_bars_json(const Report& r, const Cluster& cluster) {
  if (!r.feasible) return nullptr;
  return {{"time", to_json(bar(r, cluster, Quantity::kTime))}, {"memory", to_json(bar(r, cluster, Quantity::kMemory))}};
}

void print_error_bars(std::ostream& out, const Report& r, const Cluster& cluster) {
  if (!r.feasible) return;
  if (classes().empty()) {
    out << "prediction error: " << kNoCalibration << "\n";
    return;
  }
  const std::optional<ErrorBar> t = bar(r, cluster, Quantity::kTime), m = bar(r, cluster, Quantity::kMemory);
  // No class covers these GPU types: said, not borrowed from another GPU's runs.
  out << "prediction error on published runs: time " << (t ? t->text() : kNoClass) << "; memory " << (m ? m->text() : kNoClass)
      << "\n";
}

std::string training_time_error_bar(const std::set<std::string>& gpus, long gpu_count, long nodes, bool moe, bool low_precision,
                                    bool fp32) {
  if (classes().empty()) return kNoCalibration;
  RunScope s;
  s.gpus = gpus;
  s.gpu_count = static_cast<int>(gpu_count);
  s.nodes = static_cast<int>(nodes);
  const std::optional<ErrorBar> b =
      nearest_error_bar(classes(), Quantity::kTime, RunKind::kTraining, gpus, s.name(), moe, low_precision, fp32, profiles_in_force(gpus));
  return b ? b->text() : kNoClass;
}

}  // namespace hetsim
