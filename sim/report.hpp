// File: sim/report.hpp
// The result of simulating one program: iteration time, throughput, utilisation, per-device
// breakdown, and the assumptions behind the numbers. Serialises to the report JSON of
// docs/report-schema.md (keys carry units).
#pragma once

#include <nlohmann/json.hpp>
#include <map>
#include <string>
#include <vector>

#include "sim/program.hpp"
#include "sim/sim_result.hpp"
#include "topologies/cluster.hpp"

namespace hetsim {

struct DeviceReport {
  std::string name;  // "gpu3"
  std::string gpu;   // device type
  std::string node_type;
  double compute_s = 0;
  double comm_s = 0;
  double idle_s = 0;  // neither stream busy
  double peak_memory_bytes = 0;
  double memory_capacity_bytes = 0;
};

// The report JSON's schema (docs/report-schema.md): raised when a key changes meaning or goes away
// (adding keys keeps it). Every report carries it as `schema_version`.
inline constexpr int kReportSchemaVersion = 1;

struct Report {
  std::string strategy;
  std::string kind = "spmd";  // spmd (one program over a flat list of GPUs) | hybrid (pipelines of stages)
  std::string shape;          // hybrid: "2 pipelines x 4 stages, tp 8, 1f1b"
  std::string layer_split;    // hybrid: transformer layers per stage of the first pipeline, "20/4" (JSON layer_split)
  std::string cluster;
  std::string model;
  // Which calibration class applies (not in the JSON): mixture-of-experts layers; GEMMs in a
  // low-precision recipe (fp8, mxfp8, nvfp4); GEMMs in fp32.
  bool moe = false;
  bool low_precision_gemms = false;
  bool fp32_gemms = false;
  std::string gemm_format;  // TrainingSpec::gemm_format()
  // training.kernels eager: PyTorch's autograd kernels (JSON training_kernels); no published run
  // hetsim holds trained so, so there is no time error bar.
  bool eager_kernels = false;
  // Mamba layers (a hybrid model's mamba: block): no published run hetsim predicts within its bars
  // trained them (docs/validation.md's held-out Nemotron 3 Nano rows), so there is no time error bar.
  bool mamba_layers = false;
  // GPU type -> the calibration profile whose parameters moved this run's times ("none": the raw
  // model there), as calibration_applying says for this kind of model.
  std::map<std::string, std::string> calibration;
  bool feasible = true;
  std::string infeasible_reason;  // when !feasible: which device, by how much

  double estimated_s = 0;  // the planner's analytic estimate, when the program came from the planner
  double iteration_time_s = 0;
  double samples_per_s = 0;
  double tokens_per_s = 0;
  double mfu = 0;  // model FLOPs / (time x sum of peaks of the dtype each device runs)
  double upper_bound_samples_per_s = 0;  // 0 when not computed
  double efficiency = 0;                 // samples_per_s / upper bound
  std::string fidelity;
  uint64_t sim_activities = 0;
  // Copies of a pipeline's steady state added at a period rather than simulated (SimResult), and
  // the estimated bound on the iteration time for it; 0 when none.
  long extrapolated_copies = 0;
  double extrapolation_bound_s = 0;
  std::vector<DeviceReport> devices;
  std::vector<std::pair<std::string, double>> compute_time_sources;  // share of compute time per source
  std::vector<std::pair<std::string, double>> critical_path;  // seconds on the critical path by kind of task (critical_path.hpp)
  std::vector<std::string> assumptions;

  [[nodiscard]] nlohmann::json to_json() const;
};

// Fills everything but the upper bound and assumptions from a simulated program.
[[nodiscard]] Report make_report(const Program& program, const Cluster& cluster, const SimResult& result,
                                 const SimOptions& options);

// Throws std::runtime_error when a figure of `r` is non-finite or negative, or a feasible run took
// no time: such a report is never printed (make_report and set_upper_bound call it).
void check_figures(const Report& r);

// Sets upper_bound_samples_per_s and efficiency.
void set_upper_bound(Report& r, double upper_bound_samples_per_s);

}  // namespace hetsim
