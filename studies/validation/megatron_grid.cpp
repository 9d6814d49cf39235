// File: studies/validation/megatron_grid.cpp
#include "studies/validation/megatron_grid.hpp"

namespace hetsim {

namespace {

void fail(const Diagnostic& where, std::string message) {
  Diagnostic d = where;
  d.field = d.field.empty() ? "megatron" : d.field + ".megatron";
  d.message = std::move(message);
  throw InputError({d});
}

}  // namespace

HybridPlan megatron_plan(const MegatronGrid& g, const ModelSpec& model, const Cluster& cluster, const Diagnostic& where) {
  const long gpus = cluster.gpu_count();
  const long per_pipeline = static_cast<long>(g.tp) * g.pp;
  if (gpus % per_pipeline != 0) {
    fail(where, "tp x pp = " + std::to_string(per_pipeline) + " does not divide the cluster's " + std::to_string(gpus) + " GPUs");
  }
  const long dp = gpus / per_pipeline;
  const long slices = static_cast<long>(g.pp) * g.chunks;
  if (model.layers % slices != 0) {
    fail(where, "pp x chunks = " + std::to_string(slices) + " does not divide the model's " + std::to_string(model.layers) +
                    " layers");
  }
  const long per_replica = dp * g.micro_batch;
  if (model.training.global_batch % per_replica != 0) {
    fail(where, "data parallel " + std::to_string(dp) + " x micro-batch " + std::to_string(g.micro_batch) +
                    " does not divide the global batch " + std::to_string(model.training.global_batch));
  }
  HybridPlan plan;
  plan.model = model.name;
  plan.cluster = cluster.name;
  plan.micro_batch = g.micro_batch;
  plan.schedule = g.schedule;
  plan.recompute = g.recompute;
  plan.sequence_parallel = g.sequence_parallel;
  plan.tp_comm_overlap = g.tp_comm_overlap;
  plan.gradient_sync = g.gradient_sync;
  plan.grad_sync_overlap = g.grad_sync_overlap;
  const int per_chunk = static_cast<int>(model.layers / slices);
  for (long d = 0; d < dp; ++d) {
    PipelinePlan p;
    p.micro_batches = model.training.global_batch / per_replica;
    for (int s = 0; s < g.pp; ++s) {
      StagePlan st;
      st.tp = g.tp;
      const long base = s * dp * g.tp + d * g.tp;
      for (int i = 0; i < g.tp; ++i) st.devices.push_back(static_cast<int>(base + i));
      for (int c = 0; c < g.chunks; ++c) {
        const int first = (c * g.pp + s) * per_chunk;
        st.chunks.push_back({first, first + per_chunk - 1});
      }
      p.stages.push_back(std::move(st));
    }
    plan.pipelines.push_back(std::move(p));
  }
  const std::vector<PlanProblem> problems = check_hybrid_plan(plan, model, cluster);
  if (!problems.empty()) fail(where, "the grid breaks a plan rule: " + problems.front().field + ": " + problems.front().message);
  return plan;
}

}  // namespace hetsim
