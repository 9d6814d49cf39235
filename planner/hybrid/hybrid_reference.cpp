// File: planner/hybrid/hybrid_reference.cpp
#include "planner/hybrid/hybrid_reference.hpp"

#include <algorithm>
#include <cmath>

#include "planner/hybrid/hybrid_planner.hpp"

namespace hetsim {

HybridReference hybrid_reference(const ModelSpec& model, const Cluster& cluster, const CostModel& cost, const SimOptions& sim) {
  HybridPlanner planner(model, cluster, cost, sim);
  HybridOptions o;
  o.simulate = 1;
  HybridSearch s = planner.search(HybridFlavour::kHetsim, o);
  HybridReference out;
  if (s.chosen < 0) return out;
  out.samples_per_s = s.judged[s.chosen].evaluation.report.samples_per_s;
  out.plan = std::move(s.judged[s.chosen].plan);
  out.leading = std::move(s.leading);
  return out;
}

HybridPlan replicate_plan(const HybridPlan& plan, int copies, int gpus_per_copy) {
  HybridPlan out = plan;
  out.pipelines.clear();
  out.pipelines.reserve(plan.pipelines.size() * static_cast<size_t>(std::max(copies, 0)));
  for (int c = 0; c < copies; ++c) {
    for (PipelinePlan p : plan.pipelines) {
      for (StagePlan& st : p.stages) {
        for (int& d : st.devices) d += c * gpus_per_copy;
      }
      out.pipelines.push_back(std::move(p));
    }
  }
  out.estimate_s = 0;
  return out;
}

double hybrid_weak_scaling(const ModelSpec& model, const Cluster& small, const HybridPlan& plan,
                           const std::vector<HybridPlan>& alternatives, const Cluster& large, const CostModel& cost,
                           const SimOptions& sim) {
  const int n_small = small.gpu_count();
  const int n_large = large.gpu_count();
  if (n_small <= 0 || n_large < n_small || n_large % n_small != 0) return 0;
  const int copies = n_large / n_small;
  // Each estimate on a model whose global batch is its plan's samples (the estimate reads the
  // plan's micro-batches; the batch only has to agree). Every plan of the search holds the same
  // samples, so per-GPU throughputs compare as the inverse of the times.
  ModelSpec small_model = model;
  small_model.training.global_batch = plan.samples();
  HybridPlanner on_small(small_model, small, cost, sim);
  const double t_small = on_small.estimate(plan).time_s;
  ModelSpec large_model = model;
  if (__builtin_mul_overflow(plan.samples(), static_cast<long>(copies), &large_model.training.global_batch)) return 0;
  HybridPlanner on_large(large_model, large, cost, sim);
  double t_large = 0;
  const auto consider = [&](const HybridPlan& p) {
    if (p.samples() != plan.samples()) return;
    const HybridEstimate e = on_large.estimate(replicate_plan(p, copies, n_small));
    if (e.fits && e.time_s > 0 && std::isfinite(e.time_s) && (t_large == 0 || e.time_s < t_large)) t_large = e.time_s;
  };
  consider(plan);
  for (const HybridPlan& p : alternatives) consider(p);
  if (!(t_small > 0) || !(t_large > 0) || !std::isfinite(t_small)) return 0;
  return std::min(1.0, t_small / t_large);
}

}  // namespace hetsim
