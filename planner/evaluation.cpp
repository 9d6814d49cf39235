// File: planner/evaluation.cpp
#include "planner/evaluation.hpp"

#include "kernels_profile/calibration_profile.hpp"
#include "sim/executor.hpp"

namespace hetsim {
namespace {

// The model a report is of: its name, what picks its calibration class, and the calibration profile
// that moved each GPU type's times.
void name_model(Report& r, const ModelSpec& model, const Cluster& cluster) {
  r.model = model.name;
  r.moe = model.moe.has_value();
  r.low_precision_gemms = model.training.low_precision_gemms();
  r.fp32_gemms = model.training.fp32_gemms();
  r.gemm_format = model.training.gemm_format();
  r.eager_kernels = model.training.kernels == TrainingKernels::kEager;
  r.mamba_layers = model.mamba.has_value();
  for (const NodeType& nt : cluster.node_types) {
    const std::optional<CalibrationProfile> p = calibration_applying(nt.gpu.name, r.moe);
    r.calibration[nt.gpu.name] = p ? profile_identity(*p) : "none";
  }
}

}  // namespace

Evaluation infeasible_evaluation(const std::string& strategy, const ModelSpec& model, const Cluster& cluster,
                                 std::string reason) {
  Evaluation ev;
  ev.report.strategy = strategy;
  ev.report.cluster = cluster.name;
  name_model(ev.report, model, cluster);
  ev.report.feasible = false;
  ev.report.infeasible_reason = std::move(reason);
  return ev;
}

Evaluation simulated_evaluation(Program program, const ModelSpec& model, const Cluster& cluster, const SimOptions& options) {
  Evaluation ev;
  ev.program = std::move(program);
  ev.result = simulate(ev.program, cluster, options);
  ev.report = make_report(ev.program, cluster, ev.result, options);
  name_model(ev.report, model, cluster);
  return ev;
}

}  // namespace hetsim
