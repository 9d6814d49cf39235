// File: planner/hybrid/pipeline_builder.hpp
// Pipeline programs from the model itself: each node type's block work from the cost model
// (cached per TP width, slice, recompute and dtype), the job's dtype and optimizer for a plan, and
// the latency of TP collectives on each node type's links.
#pragma once

#include <map>
#include <tuple>

#include "planner/hybrid/pipeline_program.hpp"
#include "planner/hybrid/stage_synthesis.hpp"

namespace hetsim {

// The first `size` GPUs of the first node of type `node_type`: the group whose links stand for
// every TP group of that width on that type.
[[nodiscard]] std::vector<int> first_node_group(const Cluster& cluster, int node_type, int size);

// Builds pipeline programs of `model` on `cluster`; `model` and `cluster` must outlive it.
class PipelineProgramBuilder {
 public:
  PipelineProgramBuilder(const ModelSpec& model, const Cluster& cluster, const CostModel& cost);
  [[nodiscard]] PipelineProgram build(const HybridPlan& plan);
  // Sets the dtype and optimizer of `plan` for the work() and context() that follow.
  void prepare(const HybridPlan& plan);
  // The blocks one GPU of node type `node_type` runs for `key`.
  [[nodiscard]] const std::vector<BlockWork>& work(int node_type, const StageWorkKey& key);
  // The synthesised layer program of a TP group of `key.tp` GPUs of `node_type` (cached).
  [[nodiscard]] const LayerSynthesis& synthesis(int node_type, const StageWorkKey& key);
  [[nodiscard]] const PipelineContext& context() const { return ctx_; }
  // Micro-batch rounds that repeat held twice (the default) or every one written out
  // (PipelineContext::fold_rounds; --every-step turns it off).
  void set_fold_rounds(bool fold) { ctx_.fold_rounds = fold; }
  // Alike data-parallel pipelines written once and mirrored (PipelineContext::mirror_pipelines;
  // --every-replica turns it off).
  void set_mirror_pipelines(bool mirror) { ctx_.mirror_pipelines = mirror; }
  // The dtype the job computes in on the GPUs of `plan` (the model's, or its fallback).
  [[nodiscard]] DType dtype_for(const HybridPlan& plan) const;

 private:
  const ModelSpec& model_;
  const Cluster& cluster_;
  CostModel cost_;  // a copy (it shares its tables): callers may pass a temporary
  PipelineContext ctx_;
  std::map<std::tuple<int, long, int, bool, int, int, int, bool, int, int, int, int, bool, int, unsigned, int, std::vector<int>, int>,
           std::vector<BlockWork>>
      cache_;
  std::map<std::tuple<int, long, int, int>, LayerSynthesis> synthesis_;  // node type, samples, tp, dtype
  std::map<std::pair<int, int>, double> tp_latency_;
};

}  // namespace hetsim
