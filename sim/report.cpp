// File: sim/report.cpp
#include "sim/report.hpp"

#include <cmath>
#include <stdexcept>

#include "base/text.hpp"
#include "kernels_profile/kernel_table.hpp"
#include "sim/critical_path.hpp"

namespace hetsim {

Report make_report(const Program& program, const Cluster& cluster, const SimResult& result, const SimOptions& options) {
  Report r;
  r.strategy = program.strategy;
  r.cluster = cluster.name;
  r.iteration_time_s = result.iteration_time_s;
  r.fidelity = std::string(fidelity_name(options.fidelity));
  r.sim_activities = result.activities;
  r.extrapolated_copies = result.extrapolated_copies;
  r.extrapolation_bound_s = result.extrapolation_bound_s;
  if (result.iteration_time_s > 0) {
    r.samples_per_s = program.samples / result.iteration_time_s;
    r.tokens_per_s = program.tokens / result.iteration_time_s;
    double peak = 0;
    for (const ProgramDevice& d : program.devices) peak += d.peak_flops;
    if (peak > 0) r.mfu = program.model_flops / (result.iteration_time_s * peak);
  }
  double total = 0;
  for (double x : program.compute_source_s) total += x;
  for (int i = 0; i < kCostSources && total > 0; ++i) {
    r.compute_time_sources.push_back({std::string(cost_source_name(static_cast<CostSource>(i))), program.compute_source_s[i] / total});
  }
  r.critical_path = result.critical_path_by_kind.empty() ? critical_path(program, result).by_kind : result.critical_path_by_kind;
  for (int g = 0; g < cluster.gpu_count(); ++g) {
    const DeviceTiming& t = result.devices[g];
    DeviceReport d;
    d.name = "gpu" + std::to_string(g);
    d.gpu = cluster.device_of(g).name;
    d.node_type = cluster.node_type_of_gpu(g).name;
    d.compute_s = t.compute_s;
    d.comm_s = t.comm_s;
    d.idle_s = std::max(0.0, result.iteration_time_s - t.busy_s);
    // A difference of two sums of the same intervals leaves a rounding residue (1e-16 s on a 1 s
    // iteration), not idle time: below 1e-12 of the iteration it is none.
    if (d.idle_s < 1e-12 * result.iteration_time_s) d.idle_s = 0;
    d.peak_memory_bytes = t.peak_memory_bytes;
    d.memory_capacity_bytes = cluster.device_of(g).memory_bytes;
    r.devices.push_back(d);
  }
  check_figures(r);
  return r;
}

void set_upper_bound(Report& r, double upper_bound_samples_per_s) {
  r.upper_bound_samples_per_s = upper_bound_samples_per_s;
  r.efficiency = upper_bound_samples_per_s > 0 ? r.samples_per_s / upper_bound_samples_per_s : 0;
  check_figures(r);
}

void check_figures(const Report& r) {
  std::vector<std::pair<const char*, double>> figures{{"iteration_time_s", r.iteration_time_s}, {"samples_per_s", r.samples_per_s},
                                                      {"tokens_per_s", r.tokens_per_s}, {"mfu", r.mfu},
                                                      {"upper_bound_samples_per_s", r.upper_bound_samples_per_s},
                                                      {"efficiency", r.efficiency}, {"estimated_s", r.estimated_s},
                                                      {"extrapolation_bound_s", r.extrapolation_bound_s}};
  for (const DeviceReport& d : r.devices) {
    figures.insert(figures.end(), {{"compute_s", d.compute_s}, {"comm_s", d.comm_s}, {"idle_s", d.idle_s},
                                   {"peak_memory_bytes", d.peak_memory_bytes}});
  }
  for (const auto& [name, v] : figures) {
    if (!std::isfinite(v) || v < 0) {
      throw std::runtime_error(std::string("report figure ") + name + " is " + format_double("%g", v) + " (" + r.strategy +
                               "): nothing is printed from a run that gives a non-finite or negative figure");
    }
  }
  if (r.feasible && !(r.iteration_time_s > 0)) {
    throw std::runtime_error("report of " + r.strategy + ": a feasible run took no time; nothing is printed");
  }
}

nlohmann::json Report::to_json() const {
  nlohmann::json j;
  j["schema_version"] = kReportSchemaVersion;
  j["strategy"] = strategy;
  j["kind"] = kind;
  if (!shape.empty()) j["shape"] = shape;
  if (!layer_split.empty()) j["layer_split"] = layer_split;
  j["cluster"] = cluster;
  j["model"] = model;
  j["training_kernels"] = eager_kernels ? "eager" : "fused";
  j["feasible"] = feasible;
  if (!feasible) {
    j["infeasible_reason"] = infeasible_reason;
  } else {
    j["iteration_time_s"] = iteration_time_s;
    if (estimated_s > 0) j["estimated_s"] = estimated_s;
    j["samples_per_s"] = samples_per_s;
    j["tokens_per_s"] = tokens_per_s;
    j["mfu"] = mfu;
    if (upper_bound_samples_per_s > 0) {  // absent when a run skipped the bound (--no-upper-bound)
      j["upper_bound_samples_per_s"] = upper_bound_samples_per_s;
      j["efficiency"] = efficiency;
    }
    j["collective_fidelity"] = fidelity;
    j["simulated_activities"] = sim_activities;
    if (extrapolated_copies > 0) {
      j["extrapolation"] = {{"copies", extrapolated_copies}, {"bound_s", extrapolation_bound_s}};
    }
    j["compute_time_sources"] = nlohmann::json::object();
    for (const auto& [name, share] : compute_time_sources) j["compute_time_sources"][name] = share;
    j["critical_path"] = nlohmann::json::array();
    for (const auto& [kind, seconds] : critical_path) j["critical_path"].push_back({{"kind", kind}, {"seconds", seconds}});
    j["devices"] = nlohmann::json::array();
    for (const DeviceReport& d : devices) {
      j["devices"].push_back({{"name", d.name},
                              {"gpu", d.gpu},
                              {"node_type", d.node_type},
                              {"compute_s", d.compute_s},
                              {"comm_s", d.comm_s},
                              {"idle_s", d.idle_s},
                              {"peak_memory_bytes", d.peak_memory_bytes},
                              {"memory_capacity_bytes", d.memory_capacity_bytes}});
    }
  }
  if (!calibration.empty()) j["calibration"] = calibration;
  j["assumptions"] = assumptions;
  return j;
}

}  // namespace hetsim
