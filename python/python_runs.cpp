// File: python/python_runs.cpp
#include "python/python_runs.hpp"

#include <algorithm>
#include <ostream>

#include "base/input_error.hpp"
#include "kernels_profile/cost_model.hpp"
#include "planner/strategies.hpp"
#include "sim/executor.hpp"
#include "studies/validation/error_bars.hpp"
#include "studies/validation/mfu_ceiling.hpp"

namespace hetsim::python {
namespace {

// The model as a run on `cluster` takes it (cli/common_args.cpp's load_inputs): the micro-batch
// within the global batch, experts sized for the cluster's GPUs.
ModelSpec model_for_run(ModelSpec model, const Cluster& cluster) {
  clamp_micro_batch(model);
  resolve_experts(model, cluster.gpu_count());
  return model;
}

// The report's `mfu_published` (null when nothing published applies). check_mfu also prints a line
// for people when the MFU is above it; a dict carries that as `above`, so the line goes nowhere.
nlohmann::json mfu_published(const Report& report, const ModelSpec& model, const Cluster& cluster) {
  std::ostream nowhere(nullptr);  // no buffer: every write is dropped
  return check_mfu(nowhere, report, model, cluster);
}

}  // namespace

nlohmann::json plan_report(const ModelSpec& spec, const Cluster& cluster, const PlannerOptions& options) {
  const ModelSpec model = model_for_run(spec, cluster);
  // The CLI's defaults (no --layer-profile, SimOptions as common_args.cpp's sim_options sets them
  // without flags): the same inputs, the same figures bit for bit.
  const PlanResult r = plan(model, cluster, CostModel::shipped(), SimOptions{}, options);
  nlohmann::json j = r.to_json();
  j["chosen"] = nullptr;
  j["plan"] = nullptr;
  if (const Evaluation* chosen = r.chosen()) {
    const Report best = r.chosen_report();
    j["error_bars"] = error_bars_json(chosen->report, cluster);
    j["mfu_published"] = mfu_published(best, model, cluster);  // null: nothing published applies, as plan --report
    j["chosen"] = best.strategy;
    j["plan"] = emitted_plan(r, model, cluster, options);
  }
  return j;
}

nlohmann::json simulate_report(const ModelSpec& spec, const Cluster& cluster, const std::string& strategy,
                               const std::string& plan_file, bool upper_bound) {
  const std::vector<std::string>& names = strategy_names();
  if (plan_file.empty() && std::find(names.begin(), names.end(), strategy) == names.end()) {
    std::string known;
    for (const std::string& n : names) known += (known.empty() ? "" : ", ") + n;
    throw InputError("strategy", "", "\"" + strategy + "\" is not a strategy; one of " + known);
  }
  const ModelSpec model = model_for_run(spec, cluster);
  const CostModel cost = CostModel::shipped();
  const SimOptions sim;
  std::vector<std::string> notes = assumptions(model, cluster, cost);
  Evaluation ev = plan_file.empty() ? evaluate_strategy(strategy, model, cluster, cost, sim)
                                    : run_plan_file(plan_file, model, cluster, cost, sim, "plan " + plan_file).evaluation;
  if (ev.report.feasible && upper_bound) set_upper_bound(ev.report, plan_upper_bound(model, cluster, cost, sim, notes));
  ev.report.assumptions.insert(ev.report.assumptions.end(), notes.begin(), notes.end());  // the run's own notes first
  nlohmann::json j = ev.report.to_json();
  j["error_bars"] = error_bars_json(ev.report, cluster);
  if (ev.report.feasible) j["mfu_published"] = mfu_published(ev.report, model, cluster);  // null: nothing published applies
  return j;
}

}  // namespace hetsim::python
