// File: studies/validation/megatron_grid.cpp
#include "studies/validation/megatron_grid.hpp"

#include <algorithm>

namespace hetsim {

namespace {

void fail(const Diagnostic& where, std::string message) {
  Diagnostic d = where;  // the grid's own location and field
  d.message = std::move(message);
  throw InputError({d});
}

}  // namespace

HybridPlan megatron_plan(const MegatronGrid& g, const ModelSpec& model, const Cluster& cluster, const Diagnostic& where) {
  const long gpus = cluster.gpu_count();
  const long group = static_cast<long>(g.tp) * g.cp;  // one data-parallel copy of a stage
  const long per_pipeline = group * g.pp;
  if (gpus % per_pipeline != 0) {
    fail(where, "tp x cp x pp = " + std::to_string(per_pipeline) + " does not divide the cluster's " + std::to_string(gpus) +
                    " GPUs");
  }
  const long dp = gpus / per_pipeline;
  // Layers over the virtual stages; the embedding and the loss count as a layer each when the
  // split accounts for them (Megatron-Core), taking one layer from the first and the last.
  const long slices = static_cast<long>(g.pp) * g.chunks;
  const long counted = model.layers + (g.embedding_in_split ? 1 : 0) + (g.loss_in_split ? 1 : 0);
  if (counted % slices != 0) {
    fail(where, "pp x chunks = " + std::to_string(slices) + " does not divide the model's " + std::to_string(model.layers) +
                    " layers" + (counted != model.layers ? " (" + std::to_string(counted) + " with the embedding and loss counted)" : ""));
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
  plan.recompute_modules = g.recompute_modules;
  plan.recompute_layers = g.recompute_layers;
  plan.activation_offload_layers = g.activation_offload_layers;
  plan.sequence_parallel = g.sequence_parallel;
  plan.tp_comm_overlap = g.tp_comm_overlap;
  plan.gradient_sync = g.gradient_sync;
  plan.grad_sync_overlap = g.grad_sync_overlap;
  plan.overlap_param_gather = g.overlap_param_gather;
  plan.overlap_moe_expert_parallel_comm = g.overlap_moe_expert_parallel_comm;
  plan.moe_dispatcher = g.moe_dispatcher;
  plan.tp_comm_userbuffers = g.tp_comm_userbuffers;
  plan.cp_comm = g.cp_comm;
  const int per_chunk = static_cast<int>(counted / slices);
  // Virtual stage v (chunk c of stage s: v = c x pp + s) holds transformer layers [first(v), first(v+1)).
  const auto first_layer = [&](long v) {
    const long l = v * per_chunk - (g.embedding_in_split && v > 0 ? 1 : 0);
    return static_cast<int>(std::min<long>(l, model.layers));
  };
  // One hetsim pipeline per data-parallel replica; with experts, whose groups span the replicas, one
  // pipeline whose stages hold every replica (their micro-batches split evenly, in lockstep).
  const bool experts = g.ep > 1 || g.expert_tp > 1;
  const long pipelines = experts ? 1 : dp, copies = experts ? dp : 1;
  if (experts) plan.micro_batch = g.micro_batch * dp;
  for (long d = 0; d < pipelines; ++d) {
    PipelinePlan p;
    p.micro_batches = model.training.global_batch / per_replica;
    for (int s = 0; s < g.pp; ++s) {
      StagePlan st;
      st.tp = g.tp;
      st.cp = g.cp;
      st.ep = g.ep;
      st.expert_tp = g.expert_tp;
      const long base = s * dp * group + d * group;  // ranks: TP fastest, then CP, then DP, then PP
      for (long i = 0; i < group * copies; ++i) st.devices.push_back(static_cast<int>(base + i));
      for (int c = 0; c < g.chunks; ++c) {
        const long v = static_cast<long>(c) * g.pp + s;
        const int first = first_layer(v), end = first_layer(v + 1);
        if (end > first) st.chunks.push_back({first, end - 1});
        else st.chunks.push_back(v == 0 ? LayerRange::embedding() : LayerRange::loss());
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
