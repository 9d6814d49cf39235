// File: studies/validation/error_bars.cpp
#include "studies/validation/error_bars.hpp"

#include <algorithm>
#include <map>
#include <ostream>
#include <set>

#include "base/data_dir.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "kernels_profile/calibration_profile.hpp"
#include "kernels_profile/device.hpp"
#include "kernels_profile/kernel_table.hpp"
#include "studies/validation/calibration.hpp"

namespace hetsim {
namespace {

// The GPU types that work in this report (only `only` where given), and how many nodes they span.
RunScope scope_of(const Report& r, const Cluster& cluster, const std::string& only = "") {
  RunScope s;
  s.gpu_count = 0;
  std::set<int> nodes;
  for (size_t g = 0; g < r.devices.size() && g < static_cast<size_t>(cluster.gpu_count()); ++g) {
    if (r.devices[g].compute_s <= 0 || (!only.empty() && r.devices[g].gpu != only)) continue;
    s.gpus.insert(r.devices[g].gpu);
    nodes.insert(cluster.gpus[g].node);
    ++s.gpu_count;
  }
  s.nodes = static_cast<int>(nodes.size());
  return s;
}

// The same time model: the same chip in another memory size (V100 16 and 32 GB), whose figures,
// efficiencies and kernels are all the same (A100 40 and 80 GB are not: their HBM differs).
bool same_time_model(const Device& a, const Device& b, const KernelTables& measured) {
  return a.vendor == b.vendor && a.peak_flops == b.peak_flops && a.memory_bandwidth_Bps == b.memory_bandwidth_Bps &&
         a.pcie_bandwidth_Bps == b.pcie_bandwidth_Bps && a.efficiency.matmul == b.efficiency.matmul &&
         a.efficiency.matmul_fp32 == b.efficiency.matmul_fp32 &&
         a.efficiency.matmul_per_dtype == b.efficiency.matmul_per_dtype && a.efficiency.vector == b.efficiency.vector &&
         a.efficiency.memory == b.efficiency.memory && a.efficiency.kernel_launch_s == b.efficiency.kernel_launch_s &&
         a.gemm == b.gemm && a.flash_attention == b.flash_attention && a.kernels_from == b.kernels_from &&
         !measured.has_device(a.name) && !measured.has_device(b.name);
}

const std::vector<Device>& shipped_devices() {
  static const std::vector<Device> devices = [] {
    std::vector<Device> all;
    for (const std::string& name : shipped_device_names()) all.push_back(load_device(data_root() / "kernels_profile/devices" / (name + ".yaml")));
    return all;
  }();
  return devices;
}

const Device* shipped_device(const std::string& name) {
  for (const Device& d : shipped_devices()) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

// The shipped classes; each also speaks for the GPU types of the same time model as one of its
// rows' (rows on V100-SXM2-32GB for a V100-SXM2-16GB prediction).
const std::vector<CalibrationClass>& classes() {
  static const std::vector<CalibrationClass> shipped = [] {
    std::vector<CalibrationClass> all = shipped_calibration();
    const KernelTables measured = KernelTables::load_dir(data_root() / "kernels_profile" / "measured");
    for (CalibrationClass& c : all) {
      std::set<std::string> twins;
      for (const std::string& g : c.gpus) {
        const Device* row = shipped_device(g);
        if (row == nullptr) continue;
        for (const Device& d : shipped_devices()) {
          if (!c.gpus.contains(d.name) && same_time_model(*row, d, measured)) twins.insert(d.name);
        }
      }
      c.gpus.insert(twins.begin(), twins.end());
    }
    return all;
  }();
  return shipped;
}

// A GPU type's sibling among a class's rows: the same chip in another memory (same vendor and peak
// FLOP/s, as A100 40 GB and 80 GB), where the profile in force on the GPU type is one the class's
// rows were predicted with. That profile was fitted on those rows, so their errors are the nearest
// evidence for its predictions on the sibling; the bar says whose rows they are. Empty: none.
std::string sibling_row(const CalibrationClass& c, const std::string& gpu, bool moe) {
  const std::optional<CalibrationProfile> p = calibration_applying(gpu, moe);
  const Device* d = shipped_device(gpu);
  if (!p || d == nullptr || !c.profiles.contains(p->name)) return "";
  for (const std::string& row : c.gpus) {
    const Device* r = shipped_device(row);
    if (r != nullptr && r->vendor == d->vendor && r->peak_flops == d->peak_flops) return row;
  }
  return "";
}

// What the nearest class is chosen by, besides the GPU types and scope.
struct Setting {
  bool moe = false, low_precision = false, fp32 = false;
  std::string gemm_format;
  bool eager = false;  // training.kernels eager
  bool mamba = false;  // Mamba layers
};
Setting setting_of(const Report& r) {
  return {r.moe, r.low_precision_gemms, r.fp32_gemms, r.gemm_format, r.eager_kernels, r.mamba_layers};
}
Setting setting_of(const ModelSpec& m) {
  return {m.moe.has_value(), m.training.low_precision_gemms(), m.training.fp32_gemms(), m.training.gemm_format(),
          m.training.kernels == TrainingKernels::kEager, m.mamba.has_value()};
}

// Every published run of the calibration set trained with a fused framework's kernels.
const char* const kNoEagerCalibration =
    "no calibration for this setting (training.kernels eager: every published run hetsim holds trained with a fused "
    "framework's kernels; docs/validation.md compares eager PyTorch with layers measured on our GPUs)";

// Only hybrid rows speak for Mamba layers (their scan kernels are a stated roofline, whose excess a
// profile fits on hybrid runs), and no published run measured their memory.
const char* const kNoMambaCalibration =
    "no calibration for this setting (Mamba layers: no published hybrid run on these GPU types, and transformer "
    "runs do not speak for the scan kernels, a stated roofline: docs/validation.md)";
const char* const kNoMambaMemoryCalibration =
    "no calibration for this setting (Mamba layers: no published run measured their memory)";

// The bar of the nearest class for a run over `s`; a class covers a GPU type through a sibling's
// rows (sibling_row) where none of its own does, and is then less near than an otherwise equally
// near class with rows of that GPU type.
std::optional<ErrorBar> bar(const RunScope& s, const Setting& r, Quantity q) {
  if (r.eager && q == Quantity::kTime) return std::nullopt;  // not borrowed from fused runs (a hybrid model
                                                             // takes hybrid classes only: nearest_error_bar)
  std::vector<CalibrationClass> candidates = classes();
  std::map<std::pair<std::string, std::string>, std::string> siblings;  // (class, GPU type) -> the row GPU speaking for it
  for (CalibrationClass& c : candidates) {
    for (const std::string& g : s.gpus) {
      if (c.quantity != q || c.gpus.contains(g)) continue;
      if (const std::string row = sibling_row(c, g, r.moe); !row.empty()) {
        c.gpus.insert(g);
        c.borrowed.insert(g);
        siblings[{c.name, g}] = row;
      }
    }
  }
  std::optional<ErrorBar> b = nearest_error_bar(candidates, q, RunKind::kTraining, s.gpus, s.name(), r.moe, r.low_precision, r.fp32,
                                                profiles_in_force(s.gpus), r.gemm_format, r.mamba);
  if (!b) return b;
  for (const std::string& g : s.gpus) {
    const auto it = siblings.find({b->of.name, g});
    if (it == siblings.end()) continue;
    b->sibling.append(b->sibling.empty() ? "" : ", ").append(it->second + " for " + g);
    b->exact = false;
  }
  return b;
}

std::optional<ErrorBar> bar(const Report& r, const Cluster& cluster, Quantity q) { return bar(scope_of(r, cluster), setting_of(r), q); }

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

// No published run mixes these GPU types: each type's own bar, over its scope alone (`alone`: one
// RunScope of one GPU type each; a lower bound on the mix's uncertainty: nothing measured what
// mixing adds). Empty for one GPU type.
std::map<std::string, std::optional<ErrorBar>> per_type_bars(const std::vector<RunScope>& alone, const Setting& setting, Quantity q) {
  std::map<std::string, std::optional<ErrorBar>> out;
  if (alone.size() < 2) return out;
  for (const RunScope& s : alone) out[*s.gpus.begin()] = bar(s, setting, q);
  return out;
}
std::map<std::string, std::optional<ErrorBar>> per_type_bars(const Report& r, const Cluster& cluster, Quantity q) {
  std::vector<RunScope> alone;
  for (const std::string& g : scope_of(r, cluster).gpus) alone.push_back(scope_of(r, cluster, g));
  return per_type_bars(alone, setting_of(r), q);
}

// The bars of per_type_bars as one line's text; empty where no type has one.
std::string per_type_text(const std::map<std::string, std::optional<ErrorBar>>& bars) {
  if (std::none_of(bars.begin(), bars.end(), [](const auto& e) { return e.second.has_value(); })) return "";
  std::string s = "no published run mixes these GPU types; each alone:";
  for (const auto& [gpu, b] : bars) {
    s.append(" ").append(gpu).append(" ");
    if (!b) {
      s.append("none;");
      continue;
    }
    s.append(format_double("±%.1f %%", 100 * b->of.p90_abs_error)).append(" (").append(b->of.name).append(");");
  }
  s.pop_back();
  return s;
}

}  // namespace

nlohmann::json error_bars_json(const Report& r, const Cluster& cluster) {
  if (!r.feasible) return nullptr;
  nlohmann::json out{{"time", to_json(bar(r, cluster, Quantity::kTime))}, {"memory", to_json(bar(r, cluster, Quantity::kMemory))}};
  for (const Quantity q : {Quantity::kTime, Quantity::kMemory}) {
    const char* key = q == Quantity::kTime ? "time" : "memory";
    if (!out[key].is_null()) continue;
    for (const auto& [gpu, b] : per_type_bars(r, cluster, q)) out["per_gpu_type"][gpu][key] = to_json(b);
  }
  return out;
}

void print_error_bars(std::ostream& out, const Report& r, const Cluster& cluster) {
  if (!r.feasible) return;
  if (classes().empty()) {
    out << "prediction error: " << kNoCalibration << "\n";
    return;
  }
  const std::optional<ErrorBar> t = bar(r, cluster, Quantity::kTime), m = bar(r, cluster, Quantity::kMemory);
  // No class covers these GPU types, or only the other kind of model's: said, not borrowed.
  const std::set<std::string> gpus = scope_of(r, cluster).gpus;
  const auto none = [&](Quantity q) -> std::string {
    if (q == Quantity::kTime && r.eager_kernels) return kNoEagerCalibration;
    const std::string each = per_type_text(per_type_bars(r, cluster, q));
    if (!each.empty()) return each;
    if (r.mamba_layers) return q == Quantity::kTime ? kNoMambaCalibration : kNoMambaMemoryCalibration;
    return missing_error_bar_text(classes(), q, RunKind::kTraining, gpus, r.moe);
  };
  out << "prediction error on published runs: time " << (t ? t->text() : none(Quantity::kTime)) << "; memory "
      << (m ? m->text() : none(Quantity::kMemory)) << "\n";
  if (const std::string c = calibration_contrast(gpus, r.moe); !c.empty()) out << c << "\n";
  // A peak within the memory bar of the capacity may not fit: the bar of its class, else the
  // widest memory bar shipped (no class speaks for these GPUs' memory).
  double margin = 0;
  if (m) {
    margin = m->of.p90_abs_error;
  } else {
    for (const CalibrationClass& c : classes()) {
      if (c.quantity == Quantity::kMemory) margin = std::max(margin, c.p90_abs_error);
    }
  }
  std::set<std::string> said;
  for (size_t g = 0; g < r.devices.size() && g < static_cast<size_t>(cluster.gpu_count()); ++g) {
    const double capacity = cluster.device_of(static_cast<int>(g)).memory_bytes, peak = r.devices[g].peak_memory_bytes;
    if (margin <= 0 || peak <= capacity * (1 - margin) || !said.insert(r.devices[g].gpu).second) continue;
    out << "memory: gpu" << g << " (" << r.devices[g].gpu << ") peaks at " << format_bytes(peak) << " of " << format_bytes(capacity)
        << ", within " << format_double("%.1f %%", 100 * margin) << " of its capacity ("
        << (m ? "its memory error bar" : "no published run measured this GPU type's memory: the widest memory error bar of any other")
        << "): it may not fit\n";
  }
}

std::string calibration_contrast(const std::set<std::string>& gpus, bool moe) {
  std::string calibrated, raw;
  for (const std::string& g : gpus) {
    const std::optional<CalibrationProfile> p = calibration_applying(g, moe);
    std::string& to = p ? calibrated : raw;
    to += (to.empty() ? "" : ", ") + g + (p ? " (" + p->name + ")" : "");
  }
  if (calibrated.empty() || raw.empty()) return "";
  return "calibration differs across these GPU types: " + calibrated + " under a calibration profile, " + raw +
         " on the raw model, which ran faster than measured wherever a profile was fitted (docs/validation.md): a raw GPU reads "
         "optimistic beside a calibrated one. Compare like with like: --calibration none for all, or a profile for each "
         "(hetsim calibrate)";
}

std::string training_time_error_bar(const std::set<std::string>& gpus, long gpu_count, long nodes, const ModelSpec& model) {
  if (classes().empty()) return kNoCalibration;
  RunScope s;
  s.gpus = gpus;
  s.gpu_count = static_cast<int>(gpu_count);
  s.nodes = static_cast<int>(nodes);
  const Setting setting = setting_of(model);
  if (setting.eager) return kNoEagerCalibration;
  const std::optional<ErrorBar> b = bar(s, setting, Quantity::kTime);
  if (b) return b->text();
  // A mix: each type's bar over the mix's scope (how its GPUs split over the nodes is not known here).
  std::vector<RunScope> alone;
  for (const std::string& g : gpus) {
    alone.push_back(s);
    alone.back().gpus = {g};
  }
  const std::string each = per_type_text(per_type_bars(alone, setting, Quantity::kTime));
  if (!each.empty()) return each;
  return setting.mamba ? kNoMambaCalibration : missing_error_bar_text(classes(), Quantity::kTime, RunKind::kTraining, gpus, model.moe.has_value());
}

}  // namespace hetsim
