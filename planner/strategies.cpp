// File: planner/strategies.cpp
#include "planner/strategies.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "base/input_error.hpp"
#include "base/log.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "kernels_profile/calibration_profile.hpp"
#include "kernels_profile/fused_attention.hpp"
#include "kernels_profile/kernel_table.hpp"
#include "planner/block_costs.hpp"
#include "planner/data_parallel.hpp"
#include "planner/reference_key.hpp"
#include "planner/spmd/spmd_judge.hpp"
#include "sim/executor.hpp"

namespace hetsim {

const std::vector<std::string>& strategy_names() {
  static const std::vector<std::string> kNames{"dp-even", "dp-proportional"};
  return kNames;
}

std::string strategy_description(const std::string& name) {
  if (name == "dp-even") return "data parallel, every GPU the same share of the global batch";
  if (name == "dp-proportional") return "data parallel, batch shares proportional to each GPU type's speed on the model";
  return "";
}

Evaluation evaluate_strategy(const std::string& strategy, const ModelSpec& model, const Cluster& cluster,
                             const CostModel& cost, const SimOptions& options, long global_batch) {
  const long batch = global_batch > 0 ? global_batch : model.training.global_batch;
  BatchSplit split = BatchSplit::kEven;
  if (strategy == "dp-proportional") split = BatchSplit::kProportional;
  else if (strategy != "dp-even") throw std::invalid_argument("unknown strategy " + strategy);
  DataParallelPlan plan = plan_data_parallel(model, cluster, cost, split, batch, options.every_step, options.every_replica);
  if (!plan.feasible) return infeasible_evaluation(strategy, model, cluster, plan.infeasible_reason);
  const auto idle = std::count(plan.samples.begin(), plan.samples.end(), 0L);
  Evaluation ev = simulated_evaluation(std::move(plan.program), model, cluster, options);
  // GPUs with no sample still hold the model and join every gradient all-reduce: said, since the
  // throughput is then that of fewer GPUs paying the collective of all of them.
  if (idle > 0) {
    const std::string n = std::to_string(cluster.gpu_count());
    ev.report.assumptions.push_back(std::to_string(idle) + " of " + n + " GPUs get no sample of the global batch of " +
                                    std::to_string(batch) + " (" + strategy +
                                    "): they hold the model and join the gradient all-reduce but compute nothing. " +
                                    (split == BatchSplit::kEven ? "A global batch of at least " + n + " gives each GPU one"
                                                                : "Their share of it, by their speed, rounds to none"));
  }
  return ev;
}

namespace {

// One homogeneous reference: the best per-GPU samples/s of `sub` and the notes on how it was had.
struct Reference {
  double per_gpu = 0;
  std::vector<std::string> notes;
  bool machine_limited = false;  // a planner was left out for this machine's limits: not kept
};

// With `scale_to`, `sub` is its stand-in (reference_stand_in): the reference planner's figure is
// scaled to `scale_to` by its weak scaling, the data-parallel and SPMD figures are kept as they are.
Reference homogeneous_reference(const ModelSpec& model, const Cluster& sub, long batch, const CostModel& cost,
                                const SimOptions& options, bool synthesise, const ReferencePlanner& reference,
                                const Cluster* scale_to = nullptr) {
  Reference out;
  std::function<double(const Cluster&)> weak_scaling;
  const int nt = sub.gpu_count();
  double& best = out.per_gpu;
  for (const std::string& s : strategy_names()) {
    const Evaluation ev = evaluate_strategy(s, model, sub, cost, options, batch);
    if (ev.report.feasible) best = std::max(best, ev.report.samples_per_s / nt);
  }
  ModelSpec scaled = model;
  scaled.training.global_batch = batch;
  scaled.training.micro_batch = std::min(scaled.training.micro_batch, batch);
  // A reference whose program is too large for this machine (a huge global batch: SPMD and
  // pipeline programs still hold every accumulation step) is left out, and the note says so.
  auto left_out = [&](const char* what, const InputError& e) {
    std::string note = "upper bound for " + sub.node_types[0].gpu.name + ": ";
    note.append(what).append(" left out: ").append(e.diagnostics().front().message);
    out.notes.push_back(std::move(note));
    out.machine_limited = true;
  };
  if (synthesise) {
    try {
      const JudgedPlan plan = plan_and_judge(scaled, sub, cost, SpmdPlanOptions{}, 1, options, "reference");
      if (plan.chosen >= 0) best = std::max(best, plan.judged[plan.chosen].evaluation.report.samples_per_s / nt);
    } catch (const InputError& e) {
      left_out("SPMD synthesis", e);
    }
  }
  // The data-parallel and SPMD figures (`best` so far) are not scaled on a stand-in: more copies
  // of the same work per GPU only add synchronisation, so they stay above the type's own.
  double planner_best = 0;  // `reference`'s, scaled by its own closed form on a stand-in
  if (reference) {
    try {
      PlannerReference r = reference(scaled, sub);
      planner_best = r.samples_per_s / nt;
      weak_scaling = std::move(r.weak_scaling);
    } catch (const InputError& e) {
      left_out("the hybrid planner", e);
    }
  }
  const double others = best;
  const double s = scale_to != nullptr && weak_scaling ? weak_scaling(*scale_to) : 0;  // 0: not scaled
  best = std::max(best, s > 0 ? planner_best * s : planner_best);
  if (best == 0) {
    // No known strategy fits this type alone: bound it by its compute-only speed.
    const DataParallelPlan p = plan_data_parallel(model, sub, cost, BatchSplit::kEven, batch);
    best = p.speed_samples_per_s.empty() ? 0 : p.speed_samples_per_s.front();
    out.notes.push_back("upper bound for " + sub.node_types[0].gpu.name +
                        ": no strategy fits a homogeneous cluster of it, so its compute-only speed is used");
  }
  if (scale_to != nullptr) {
    const NodeType& type = sub.node_types[0];
    std::string note = "upper bound for " + type.gpu.name + ": derived from " + std::to_string(nt) + " of its GPUs (" +
                       std::to_string(type.count) + " nodes, global batch " + std::to_string(batch) + "), not planned on all " +
                       std::to_string(scale_to->gpu_count()) + ": ";
    if (s > 0 && planner_best * s >= others) {
      note += "the hybrid plan's figure scaled to them by the closed form, its plan and the search's next best copied over them (x" +
              format_double("%.4f", s) + ", an estimate)";
    } else if (s > 0) {
      note += "the data-parallel or SPMD figure, above the hybrid plan's scaled by its closed form (x" + format_double("%.4f", s) +
              "), not scaled: a looser bound";
    } else {
      note += "not scaled (no hybrid plan on them that the closed form could scale): a looser bound";
    }
    out.notes.push_back(std::move(note));
  }
  return out;
}

// A cache entry: the per-GPU figure exactly (hex float) and the notes.
std::string encode(const Reference& r) {
  return nlohmann::json{{"per_gpu_samples_per_s", format_double("%a", r.per_gpu)}, {"notes", r.notes}}.dump();
}

std::optional<Reference> decode(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object() || !j.contains("per_gpu_samples_per_s") || !j["per_gpu_samples_per_s"].is_string() || !j.contains("notes") ||
      !j["notes"].is_array()) {
    return std::nullopt;
  }
  Reference r;
  const std::string figure = j["per_gpu_samples_per_s"].get<std::string>();
  char* end = nullptr;
  r.per_gpu = std::strtod(figure.c_str(), &end);
  // Within what a simulation gives (0 where the type's reference does not fit): an edited entry is
  // computed again, never taken (a figure of 2^1000 put the efficiency at 0.0 %).
  if (figure.empty() || end != figure.c_str() + figure.size() || !std::isfinite(r.per_gpu) || r.per_gpu < 0 || r.per_gpu > 1e9 ||
      (r.per_gpu > 0 && r.per_gpu < 1e-9)) {
    return std::nullopt;
  }
  for (const nlohmann::json& n : j["notes"]) {
    if (!n.is_string()) return std::nullopt;
    r.notes.push_back(n.get<std::string>());
  }
  return r;
}

}  // namespace

double upper_bound_samples_per_s(const ModelSpec& model, const Cluster& cluster, const CostModel& cost,
                                 const SimOptions& options, std::vector<std::string>& notes, bool synthesise,
                                 const ReferencePlanner& reference, const DiskCache* cache, const std::string& reference_name, int direct_max_gpus) {
  const int n = cluster.gpu_count();
  double total = 0;
  for (int t = 0; t < static_cast<int>(cluster.node_types.size()); ++t) {
    const Cluster sub = cluster.only_node_type(t);
    const int nt = sub.gpu_count();
    const long batch = std::max<long>(1, std::lround(static_cast<double>(model.training.global_batch) * nt / n));
    const std::optional<ReferenceStandIn> stand_in = reference_stand_in(sub, batch, direct_max_gpus);
    const bool cached = cache != nullptr && cache->enabled();
    std::string key;
    std::optional<Reference> r;
    if (cached) {
      key = reference_key(sub, model, batch, cost, options,
                          std::string("data-parallel strategies") + (synthesise ? ", SPMD synthesis" : "") +
                              (reference ? ", " + reference_name : "") +
                              (stand_in ? ", derived from " + std::to_string(stand_in->cluster.gpu_count()) + " GPUs" : ""));
      if (const std::optional<std::string> hit = cache->get(key)) r = decode(*hit);
      if (r) log_info("upper bound for " + sub.node_types[0].gpu.name + ": its reference from the cache (" + cache->dir().string() + ")");
    }
    if (!r) {
      if (reference) {
        log_info("planning and simulating the homogeneous reference of " + sub.node_types[0].gpu.name +
                 (stand_in ? " on " + std::to_string(stand_in->cluster.gpu_count()) + " of its " + std::to_string(nt) +
                                 " GPUs (scaled to all by the closed form)"
                           : std::string()) +
                 " for the upper bound ...");
      }
      r = stand_in ? homogeneous_reference(model, stand_in->cluster, stand_in->batch, cost, options, synthesise, reference, &sub)
                   : homogeneous_reference(model, sub, batch, cost, options, synthesise, reference);
      // One left out for this machine's limits (its memory, ulimit -v) may fit the next run: not kept.
      if (cached && !r->machine_limited) (void)cache->put(key, encode(*r));
    }
    notes.insert(notes.end(), r->notes.begin(), r->notes.end());
    total += r->per_gpu * nt;
  }
  return total;
}

namespace {

// Each GPU type of the cluster once, in node-type order.
std::vector<const Device*> distinct_gpus(const Cluster& cluster) {
  std::vector<const Device*> out;
  for (const NodeType& nt : cluster.node_types) {
    const bool seen = std::any_of(out.begin(), out.end(), [&](const Device* d) { return d->name == nt.gpu.name; });
    if (!seen) out.push_back(&nt.gpu);
  }
  return out;
}

}  // namespace

std::vector<std::string> assumptions(const ModelSpec& model, const Cluster& cluster, const CostModel& cost, bool interference) {
  std::vector<std::string> out;
  out.push_back("compute times: measured kernel tables (kernels_profile/measured) where they cover a GPU type, a "
                "per-layer profile where given, else the roofline model with assumed efficiencies (efficiency blocks of "
                "kernels_profile/devices/*.yaml); compute_time_sources gives the shares");
  {  // GEMMs on the roofline beside measured ones: a what-if between them leans to the roofline
    const KernelTables* measured = cost.tables();
    std::string roofline;
    for (const Device* gpu : distinct_gpus(cluster)) {
      if (gpu->kernels_from.empty() && (measured == nullptr || !measured->has_device(gpu->name))) {
        roofline += (roofline.empty() ? "" : ", ") + gpu->name;
      }
    }
    if (!roofline.empty()) {
      out.push_back("GEMMs on " + roofline +
                    ": the roofline at the device file's matmul efficiency, one published shape's rate carried to the others "
                    "by the shape model, not measured here. Checked where GEMMs are measured (kernels_profile/measured, "
                    "scripts/check-shape-model): from H100's and H200's own best published shapes the same model predicts our "
                    "measured bf16 GEMMs a median 14 and 10 % fast (354 shapes each; 14-20 % where m or n is 8192 or more), so "
                    "where a device's figure is the best of a search over shapes (the maximum achievable matmul tables most device "
                    "files cite), its GEMMs likely run about that much faster here than on the hardware, beside a GPU type with "
                    "measured tables or one scaled from them");
    }
  }
  if (model.training.attention == AttentionKernel::kFused) {  // kernels_profile/fused_attention.hpp
    std::string scaled, as_flash;
    for (const Device* gpu : distinct_gpus(cluster)) {
      std::string& into = fused_attention_for(gpu->name, gpu->kernels_from) != nullptr ? scaled : as_flash;
      into += (into.empty() ? "" : ", ") + gpu->name;
    }
    out.push_back("attention: fused (cuDNN's kernels, as Transformer Engine runs them): " +
                  (scaled.empty() ? std::string() : "FlashAttention-2's times over the published cuDNN/FlashAttention-2 ratio "
                                                    "(FlashAttention-3 paper, H100; compute_time_sources: scaled) on " + scaled) +
                  (scaled.empty() || as_flash.empty() ? "" : "; ") + (as_flash.empty() ? "" : "costed as flash on " + as_flash));
  }
  const DType dtype = resolve_dtype(model, cluster);
  if (dtype != model.training.dtype) {
    out.push_back("all devices compute in " + std::string(dtype_name(dtype)) + ", the model's fallback: not every GPU supports " +
                  std::string(dtype_name(model.training.dtype)));
  }
  out.push_back("network: SimGrid CM02 flow model with RDMA-like settings (latency + size/bandwidth, max-min sharing)");
  out.push_back("collectives: NCCL/RCCL-style algorithms, chosen per collective by an alpha-beta estimate on the "
                "cluster's links; phase fidelity adds per-step latencies and pipeline fill analytically");
  // compute beside a collective (sim/executor: SimOptions::collective_interference)
  if (!interference) {
    out.push_back("compute beside a collective on its GPU: not slowed (--no-interference)");
  } else {
    std::string measured, unmeasured, fitted;
    for (const Device* gpu : distinct_gpus(cluster)) {
      if (gpu->collective_interference > 1) {
        measured += (measured.empty() ? "" : ", ") + gpu->name + " " + format_double("%.2f", gpu->collective_interference) + "x";
      } else if (gpu->fitted.overlap_slowdown <= 0) {
        unmeasured += (unmeasured.empty() ? "" : ", ") + gpu->name;
      }
      if (gpu->fitted.overlap_slowdown > 0) {
        fitted += (fitted.empty() ? "" : ", ") + gpu->name + " " + format_double("%.2f", 1 + gpu->fitted.overlap_slowdown) + "x";
      }
    }
    std::string line = "compute beside a collective on its GPU: ";
    if (!measured.empty()) line += "slowed as measured, " + measured + " (a GEMM beside a reduction kernel on NCCL's 16 channels)";
    if (!fitted.empty()) {
      line += std::string(measured.empty() ? "" : "; ") + "slowed by the calibration profile's overlap_slowdown, " + fitted +
              (measured.empty() ? "" : " (times any measured slowdown)") + " (in the simulation: compute_time_sources leave it out)";
    }
    // --no-interference is named only where it would change something.
    if (measured.empty() && fitted.empty()) {
      out.push_back(line + "not slowed (no GPU type here was measured)");
    } else {
      if (!unmeasured.empty()) line += "; not slowed on " + unmeasured + " (not measured)";
      out.push_back(line + "; --no-interference turns it off");
    }
  }
  {  // host time from a calibration profile (kernels_profile/calibration_profile.hpp)
    std::string with, without;
    for (const Device* gpu : distinct_gpus(cluster)) {
      if (!gpu->calibration.empty()) with += (with.empty() ? "" : "; ") + gpu->name + ": " + gpu->calibration;
      else without += (without.empty() ? "" : ", ") + gpu->name;
    }
    const CalibrationProfile* file = calibration_file_in_force();
    if (with.empty() && file != nullptr) {  // --calibration FILE for other GPU types: said, not silent
      out.push_back("calibration: the profile in force, " + file->name + " (" + file->file + "), lists none of these GPU types (it lists " +
                    join(file->devices) + "): the raw model");
    } else {
      out.push_back(with.empty() ? "calibration: none on these GPU types (the raw model; --calibration chooses a profile)"
                                 : "calibration: profile in force on " + with + (without.empty() ? "" : "; none on " + without) +
                                       "; compute_time_sources.calibrated is the time it added, --calibration none gives the raw model");
    }
  }
  bool nvidia = false, amd = false;
  for (const NodeType& nt : cluster.node_types) (nt.gpu.vendor == Vendor::kAmd ? amd : nvidia) = true;
  if (nvidia && amd && !cluster.network.cross_vendor_rdma) {
    out.push_back("NVIDIA<->AMD transfers staged through host memory (device-to-host copy, network, host-to-device copy)");
  }
  out.push_back("memory: " + format_bytes(kRuntimeReserveBytes) + " per device reserved for the runtime (assumed)");
  return out;
}

}  // namespace hetsim
