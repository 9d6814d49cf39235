// File: planner/hybrid/pipeline_program.hpp
// Turns a hybrid plan into a simulator Program: for every pipeline, stage, data-parallel copy
// (TP group) and micro-batch, forward and backward compute spans with the TP collectives between
// them (on the TP stream), activations and gradients sent between stages (on the pipeline stream,
// host-staged by the simulator when the two stages are of different vendors), in the order the
// schedule gives each stage; then gradient synchronisation over every copy of each block's weights,
// bucketed and overlapped with the last backward passes (all-reduce, or ZeRO reduce-scatter), and
// the optimizer step. Memory: weights, gradients and optimizer state per device, activations as the
// schedule holds them.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "kernels_profile/cost_model.hpp"
#include "planner/hybrid/hybrid_plan.hpp"
#include "planner/hybrid/stage_work.hpp"
#include "sim/program.hpp"
#include "topologies/cluster.hpp"
#include "workloads/model.hpp"

namespace hetsim {

// The work of one GPU of a TP group of node type `node_type` for `key` (blocks in forward order:
// embedding, layers, head). The reference must stay valid while the program is built.
using StageWorkFn = std::function<const std::vector<BlockWork>&(int node_type, const StageWorkKey& key)>;

struct PipelineContext {
  std::string strategy = "hybrid";
  DType dtype = DType::kFp16;
  double grad_bytes_per_param = 2;    // as reduced across copies (4 with fp32 gradients)
  double weight_bytes_per_param = 2;  // as ZeRO gathers them (FP8 under fp8_param_gather)
  double held_weight_bytes_per_param = 2;  // as every device holds them in full (ZeRO-1)
  // Per node type (the cluster's node_types order): weights + gradients + optimizer state, and of
  // those the low-precision weight copies (kept in full under ZeRO-1), which depend on the GPU
  // (per-tensor FP8 keeps one copy where its GEMMs take any layout: weight_copy_bytes).
  std::vector<double> state_bytes_per_param;
  std::vector<double> copy_bytes_per_param;
  // Optimizer step over `params` parameters on a device of node type `node_type` (seconds).
  std::function<double(int node_type, double params)> optimizer_s;
  double tokens_per_sample = 0;
  double model_flops_per_sample = 0;  // forward + backward, without recompute
  double bucket_params = 40e6;        // gradient buckets of about this many parameters (Megatron's default)
  double tied_embedding_params = 0;   // word embeddings the head reuses (vocabulary x hidden; 0: untied)
  double reserve_bytes = 0;           // per device, for the runtime
  // Granularity of TP collectives: every part of every block separately (true), or one compute
  // span and one collective per chunk and pass carrying all the bytes, with the latency of the
  // collectives so merged added to the span (false, the default: about 20x fewer tasks).
  bool tp_per_part = false;
  // Latency (alpha) of one TP all-reduce over `tp` GPUs of node type `node_type`.
  std::function<double(int node_type, int tp)> tp_latency_s;
  // Rounds of steps that repeat the one before (the steady state of a pipeline, micro-batch after
  // micro-batch) held twice and the rest left to the simulator (Program::repeated_step), so that
  // micro-batches cost no memory however many there are (true, the default); or every one written.
  bool fold_rounds = true;
  // Data-parallel pipelines that nothing tells apart written once, their tasks mirrored on the
  // others' devices (pipeline_mirrors.hpp; true, the default); or each written out (--every-replica).
  bool mirror_pipelines = true;
};

struct PipelineProgram {
  bool feasible = false;
  std::string infeasible_reason;           // names the device and the shortfall
  Program program;                         // built even when memory does not fit
  std::vector<double> peak_memory_bytes;   // per device: static + activations in schedule order
  bool too_large = false;                  // infeasible for hetsim's pass limit, not for the GPUs
};

// Blocks (embedding 0, layers 1..L, head L+1) that stage `s` of `stages` runs in chunk `chunk`.
[[nodiscard]] std::vector<int> stage_blocks(const StagePlan& st, int s, int stages, int chunk, int layers);

// Samples of each micro-batch that every data-parallel copy (TP group) of stage `st` runs:
// shares proportional to each copy's speed on `blocks` (all the stage's blocks).
[[nodiscard]] std::vector<long> replica_shares(const HybridPlan& plan, const StagePlan& st, const std::vector<int>& blocks,
                                               const Cluster& cluster, const StageWorkFn& work);

// From a checked plan (check_hybrid_plan found nothing).
[[nodiscard]] PipelineProgram build_pipeline_program(const HybridPlan& plan, const Cluster& cluster,
                                                     const StageWorkFn& work, const PipelineContext& ctx);

}  // namespace hetsim
