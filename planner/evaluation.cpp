// File: planner/evaluation.cpp
#include "planner/evaluation.hpp"

#include "sim/executor.hpp"

namespace hetsim {

Evaluation infeasible_evaluation(const std::string& strategy, const ModelSpec& model, const Cluster& cluster,
                                 std::string reason) {
  Evaluation ev;
  ev.report.strategy = strategy;
  ev.report.cluster = cluster.name;
  ev.report.model = model.name;
  ev.report.moe = model.moe.has_value();
  ev.report.low_precision_gemms = model.training.gemm_precision != GemmPrecision::kDtype;
  ev.report.feasible = false;
  ev.report.infeasible_reason = std::move(reason);
  return ev;
}

Evaluation simulated_evaluation(Program program, const ModelSpec& model, const Cluster& cluster, const SimOptions& options) {
  Evaluation ev;
  ev.program = std::move(program);
  ev.result = simulate(ev.program, cluster, options);
  ev.report = make_report(ev.program, cluster, ev.result, options);
  ev.report.model = model.name;
  ev.report.moe = model.moe.has_value();
  ev.report.low_precision_gemms = model.training.gemm_precision != GemmPrecision::kDtype;
  return ev;
}

}  // namespace hetsim
