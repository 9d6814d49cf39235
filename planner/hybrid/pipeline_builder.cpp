// File: planner/hybrid/pipeline_builder.cpp
#include "planner/hybrid/pipeline_builder.hpp"

#include <algorithm>

#include "planner/block_costs.hpp"
#include "planner/hybrid/moe_dispatch.hpp"
#include "sim/collective.hpp"
#include "topologies/fabric.hpp"

namespace hetsim {

std::vector<int> first_node_group(const Cluster& cluster, int node_type, int size) {
  int first = 0;
  while (cluster.gpus[first].node_type != node_type) ++first;
  std::vector<int> group(std::max(1, size));
  for (size_t k = 0; k < group.size(); ++k) group[k] = first + static_cast<int>(k);
  return group;
}

PipelineProgramBuilder::PipelineProgramBuilder(const ModelSpec& model, const Cluster& cluster, const CostModel& cost)
    : model_(model), cluster_(cluster), cost_(cost) {
  ctx_.tokens_per_sample = static_cast<double>(model.seq_len);
  ctx_.model_flops_per_sample = model_flops_per_sample(model, resolve_dtype(model, cluster));
  ctx_.reserve_bytes = kRuntimeReserveBytes;
  if (model.tied_embeddings && model.family != Family::kVit && model.family != Family::kVgg) {
    ctx_.tied_embedding_params = static_cast<double>(model.vocab) * static_cast<double>(model.hidden);
  }
  // Alpha of a TP all-reduce: the intercept of the simulator's own algorithm estimate on the
  // first `tp` GPUs of a node of that type.
  ctx_.tp_latency_s = [this](int node_type, int tp) {
    const auto key = std::make_pair(node_type, tp);
    auto it = tp_latency_.find(key);
    if (it == tp_latency_.end()) {
      const std::vector<int> group = first_node_group(cluster_, node_type, tp);
      const Fabric fabric(cluster_);
      const AlphaBetaFit f = fit_alpha_beta(CollectiveOp::kAllReduce, group, cluster_, fabric, 1024.0 * 1024, 64.0 * 1024 * 1024);
      it = tp_latency_.emplace(key, f.alpha_s).first;
    }
    return it->second;
  };
}

DType PipelineProgramBuilder::dtype_for(const HybridPlan& plan) const {
  bool all = true;
  for (const PipelinePlan& p : plan.pipelines) {
    for (const StagePlan& s : p.stages) {
      for (int d : s.devices) all = all && cluster_.device_of(d).supports(model_.training.dtype);
    }
  }
  return all || !model_.training.dtype_fallback ? model_.training.dtype : *model_.training.dtype_fallback;
}

const std::vector<BlockWork>& PipelineProgramBuilder::work(int node_type, const StageWorkKey& stage_key) {
  StageWorkKey key = stage_key;
  key.ep_nodes = ep_nodes(key.ep, key.expert_tp, cluster_.node_types[node_type].nvlink_domain);
  const bool synthesised = key.program == StageProgram::kSynthesised && key.tp > 1;
  const auto k = std::make_tuple(node_type, key.samples, key.tp, key.sequence_parallel, static_cast<int>(key.recompute),
                                 static_cast<int>(ctx_.dtype), synthesised ? 1 : 0, key.vocab_parallel, key.cp,
                                 static_cast<int>(key.cp_comm), key.ep, key.expert_tp, key.userbuffers,
                                 static_cast<int>(key.dispatcher), key.recompute_modules,
                                 key.recompute_layers, key.chunk_starts, key.offload_layers);
  auto it = cache_.find(k);
  if (it == cache_.end()) {
    const LayerProgram layer = synthesised ? synthesis(node_type, key).program : LayerProgram{};
    it = cache_.emplace(k, stage_block_work(model_, cluster_.node_types[node_type].gpu, ctx_.dtype, cost_, key, layer)).first;
  }
  return it->second;
}

const LayerSynthesis& PipelineProgramBuilder::synthesis(int node_type, const StageWorkKey& key) {
  const auto k = std::make_tuple(node_type, key.samples, key.tp, static_cast<int>(ctx_.dtype));
  auto it = synthesis_.find(k);
  if (it == synthesis_.end()) {
    // The group's collectives: alpha-beta fits of the simulator's own algorithms on the first
    // `tp` GPUs of a node of this type, over the sizes a layer's activations take.
    const std::vector<int> group = first_node_group(cluster_, node_type, key.tp);
    const Fabric fabric(cluster_);
    auto fit = [&](CollectiveOp op) -> CollectiveCost {
      if (group.size() < 2) return {};
      const AlphaBetaFit f = fit_alpha_beta(op, group, cluster_, fabric, 1024.0 * 1024, 64.0 * 1024 * 1024);
      return {f.alpha_s, f.beta_s_per_byte};
    };
    const GroupCollectives comm{fit(CollectiveOp::kAllGather), fit(CollectiveOp::kReduceScatter),
                                fit(CollectiveOp::kAllReduce), fit(CollectiveOp::kAllToAll)};
    it = synthesis_.emplace(k, synthesise_layer(model_, cluster_.node_types[node_type].gpu, ctx_.dtype, cost_, key.samples,
                                                key.tp, comm)).first;
  }
  return it->second;
}

void PipelineProgramBuilder::prepare(const HybridPlan& plan) {
  ctx_.dtype = dtype_for(plan);
  ctx_.grad_bytes_per_param = grad_bytes_per_param(model_, ctx_.dtype);
  ctx_.weight_bytes_per_param = gathered_weight_bytes_per_param(model_, ctx_.dtype);
  ctx_.held_weight_bytes_per_param = held_weight_bytes_per_param(model_, ctx_.dtype);
  ctx_.state_bytes_per_param.clear();
  ctx_.copy_bytes_per_param.clear();
  std::vector<double> traffic;
  for (const NodeType& nt : cluster_.node_types) {
    ctx_.state_bytes_per_param.push_back(state_bytes_per_param(model_, ctx_.dtype, nt.gpu.fp8_any_layout));
    ctx_.copy_bytes_per_param.push_back(low_precision_copy_bytes_per_param(model_, nt.gpu.fp8_any_layout));
    traffic.push_back(optimizer_traffic_per_param(model_, ctx_.dtype, nt.gpu.fp8_any_layout));
  }
  ctx_.strategy = "hybrid";
  ctx_.optimizer_s = [this, traffic](int node_type, double params) {
    return cost_.optimizer_time(cluster_.node_types[node_type].gpu, params, traffic.at(static_cast<size_t>(node_type))).seconds;
  };
}

PipelineProgram PipelineProgramBuilder::build(const HybridPlan& plan) {
  prepare(plan);
  const StageWorkFn fn = [this](int node_type, const StageWorkKey& key) -> const std::vector<BlockWork>& {
    return work(node_type, key);
  };
  return build_pipeline_program(plan, cluster_, fn, ctx_);
}

}  // namespace hetsim
