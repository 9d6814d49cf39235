// File: planner/hybrid/hybrid_estimate.hpp
// The planner's closed-form estimate of a hybrid plan (HETHUB's performance predictor, used to
// prune before the simulator ranks the survivors): per stage, forward F and backward B per
// micro-batch with the TP collectives at their alpha-beta cost on the group's links, the
// boundary send c between stages, then for P stages and m micro-batches
//   T = sum_s (F_s + B_s) + 2 sum_s c_s + (m - 1) max_s (F_s + B_s)
// (interleaving divides the fill by v; splitting W out of the backward takes it out of the fill),
// plus the gradient synchronisation that the last backward passes cannot hide and the optimizer
// step. Memory per device: weights, gradients and optimizer state, plus the activations of the
// micro-batches the schedule holds at once.
#pragma once

#include <algorithm>
#include <array>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "planner/hybrid/pipeline_builder.hpp"
#include "sim/collective.hpp"
#include "topologies/fabric.hpp"

namespace hetsim {

struct HybridEstimate {
  double time_s = 0;
  bool fits = true;
  std::string reason;               // when !fits: the device that does not fit and by how much
  double worst_memory_ratio = 0;    // largest need / capacity over devices
};

// Per-stage cost of one more transformer layer, for the layer split.
struct StageLayerCost {
  double layer_s = 0;          // forward + backward of one layer per micro-batch, TP collectives included
  double fixed_s = 0;          // embedding / head on this stage, per micro-batch
  double layer_bytes = 0;      // memory per layer: its state plus the activations the schedule holds
  double free_bytes = 0;       // capacity left after the fixed blocks, the reserve and one recompute buffer
};

class HybridEstimator {
 public:
  HybridEstimator(const ModelSpec& model, const Cluster& cluster, PipelineProgramBuilder& builder);

  [[nodiscard]] HybridEstimate estimate(const HybridPlan& plan);
  // Costs for splitting layers over the stages of pipeline `p` of `plan` (its layer ranges are
  // ignored; stage order, devices, tp, schedule and micro-batches are used).
  [[nodiscard]] std::vector<StageLayerCost> layer_costs(const HybridPlan& plan, int p);

 private:
  struct StageTimes {
    double f = 0, b = 0, w = 0;  // per micro-batch: forward, backward (with recompute), weight-gradient part of b
    double grad_bytes = 0;       // gradients one TP rank holds
    double params = 0;           // parameters on one device
    double expert_params = 0;    // of those, routed experts' (synchronised over the expert shard's copies)
    int buckets = 0;             // gradient buckets of the dense parameters (gradient_sync.hpp packs them)
    int expert_buckets = 0;      // and of the routed experts'
    double saved_per_mb = 0;     // activations one micro-batch leaves on one device
    double weight_input_per_mb = 0;  // of those, what a deferred weight-gradient pass still holds
    double recompute_bytes = 0;  // largest recompute buffer of one block
    double offload_per_mb = 0;   // activations one micro-batch offloads to host memory (activation offloading)
  };
  // `paired_share`: under combined 1F1B, the share of the stage's steps that run together with
  // another (the rest, warm-up and cool-down, run alone).
  StageTimes stage_times(const HybridPlan& plan, const StagePlan& st, const std::vector<int>& blocks, int node_type,
                         long samples, double paired_share);
  double tp_time(int node_type, int tp, CollectiveOp op, double bytes);
  double tp_time(int node_type, int tp, const TpBytes& bytes);
  // `calls` collectives over `group` moving `bytes` in all: each pays the fit's latency term.
  double fit_time(const std::vector<int>& group, double bytes, CollectiveOp op, int calls = 1);
  // Seconds to move one copy's boundary tensor (`copy` bytes) from stage `st` to stage `next`
  // by the plan's resharding method.
  double boundary_time(const HybridPlan& plan, const StagePlan& st, const StagePlan& next, double copy);
  double send_time(int src, int dst, double bytes);
  // Megatron's tied-embedding all-reduces (every first-stage copy's TP rank with its partner in the
  // last stage, as planner/hybrid/gradient_sync.cpp writes them), all at once on their links; 0
  // where the plan ties no embedding across stages.
  double tied_embedding_time(const HybridPlan& plan, double tied_params, double grad_bytes_per_param);
  double optimizer_s(int node_type, double params);

  const ModelSpec& model_;
  const Cluster& cluster_;
  PipelineProgramBuilder& builder_;
  Fabric fabric_;
  std::map<std::tuple<int, int, int, double>, double> tp_cache_;
  // Fits by operation, then group: hashed, since groups are long and share long prefixes (the
  // same stage position over hundreds of pipelines), which made ordered comparisons slow. The
  // hash reads the size and at most 64 members spread over the group (a hit is still compared
  // whole): hashing every member of a 16 384-GPU group on every look-up was 70 % of the hybrid
  // search at that size.
  struct GroupHash {
    size_t operator()(const std::vector<int>& g) const noexcept {
      size_t h = g.size();
      const size_t step = std::max<size_t>(1, g.size() / 64);
      for (size_t i = 0; i < g.size(); i += step) h = h * 1000003u ^ static_cast<size_t>(g[i]);
      if (!g.empty()) h = h * 1000003u ^ static_cast<size_t>(g.back());
      return h;
    }
  };
  std::array<std::unordered_map<std::vector<int>, AlphaBetaFit, GroupHash>, 6> fit_cache_;  // by CollectiveOp
};

}  // namespace hetsim
