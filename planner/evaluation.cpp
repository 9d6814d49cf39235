// File: planner/evaluation.cpp
#include "planner/evaluation.hpp"

#include "sim/executor.hpp"

namespace hetsim {
namespace {

// The model a report is of: its name, and what picks its calibration class.
void name_model(Report& r, const ModelSpec& model) {
  r.model = model.name;
  r.moe = model.moe.has_value();
  r.low_precision_gemms = model.training.low_precision_gemms();
  r.fp32_gemms = model.training.fp32_gemms();
  r.gemm_format = model.training.gemm_format();
}

}  // namespace

Evaluation infeasible_evaluation(const std::string& strategy, const ModelSpec& model, const Cluster& cluster,
                                 std::string reason) {
  Evaluation ev;
  ev.report.strategy = strategy;
  ev.report.cluster = cluster.name;
  name_model(ev.report, model);
  ev.report.feasible = false;
  ev.report.infeasible_reason = std::move(reason);
  return ev;
}

Evaluation simulated_evaluation(Program program, const ModelSpec& model, const Cluster& cluster, const SimOptions& options) {
  Evaluation ev;
  ev.program = std::move(program);
  ev.result = simulate(ev.program, cluster, options);
  ev.report = make_report(ev.program, cluster, ev.result, options);
  name_model(ev.report, model);
  return ev;
}

}  // namespace hetsim
