// File: planner/hybrid/hybrid_plan.hpp
// A hybrid plan (docs/planner.md, docs/formats/hybrid-plan.md): pipelines of stage meshes. Each pipeline is one
// data-parallel replica of the whole model; each stage is a set of GPUs holding a range of
// transformer blocks per model chunk, run with tensor parallelism of width `tp` inside and
// data parallelism (devices / tp copies) across. A plain value: built by the planner or read from
// a plan file, checked by check_hybrid_plan(), turned into a simulator Program elsewhere.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "planner/resharding/sender_choice.hpp"

#include "topologies/cluster.hpp"
#include "workloads/model.hpp"

namespace hetsim {

enum class PipelineSchedule { kGpipe, kOneFOneB, kInterleaved, kEager, kZeroBubble };
enum class GradientSync { kAllReduce, kZero1, kZero3 };
enum class RecomputeMode { kNone, kSelective, kFull };
// Megatron-Core's --recompute-modules under selective recompute: the parts of each transformer layer
// whose forward runs again before its backward (planner/hybrid/partial_recompute.hpp says what each
// frees and repeats). A set of RecomputeModule bits; Megatron-Core's default is the attention core.
enum class RecomputeModule : unsigned { kCoreAttn = 1, kLayernorm = 2, kMoeAct = 4, kMlaUpProj = 8, kMlp = 16, kSharedExperts = 32, kMoe = 64 };
using RecomputeModules = unsigned;
inline constexpr RecomputeModules kDefaultRecomputeModules = static_cast<unsigned>(RecomputeModule::kCoreAttn);
[[nodiscard]] constexpr bool has_module(RecomputeModules set, RecomputeModule m) { return (set & static_cast<unsigned>(m)) != 0; }
// Megatron-Core's names, in bit order: "core_attn", "layernorm", "moe_act", "mla_up_proj", "mlp", "shared_experts", "moe".
[[nodiscard]] const std::vector<std::string>& recompute_module_names();
// The set as Megatron-Core's names joined by `sep`: "layernorm, moe_act".
[[nodiscard]] std::string recompute_modules_text(RecomputeModules set, std::string_view sep = ", ");
// The program of each TP group inside a stage: Megatron's tensor parallelism, or the one HAP's
// A* + LP synthesis finds for a transformer layer on the group (planner/hybrid/stage_synthesis).
enum class StageProgram { kMegatron, kSynthesised };
// How context-parallel ranks exchange what attention needs (Megatron-Core / Transformer Engine
// cp_comm_type): ring (p2p: K and V blocks passed around the CP group while each block's attention
// runs, the sequence in 2 x cp chunks for causal balance) or all-to-all (DeepSpeed-Ulysses: Q, K, V
// redistributed from sequence shards to head shards before attention and the output back after).
enum class CpComm { kRing, kAllToAll };
[[nodiscard]] std::string_view cp_comm_name(CpComm c);  // "ring", "all-to-all"
// How a mixture-of-experts layer's tokens reach the GPUs of their experts and come back (Megatron-
// Core's --moe-token-dispatcher-type; planner/hybrid/moe_dispatch.hpp has the traffic of each):
//   alltoall  each (token, expert) copy to its expert's GPU in one all-to-all over the EP group;
//   allgather every token to every GPU of the EP group (all-gather), outputs summed back
//             (reduce-scatter): bytes that do not grow with top-k;
//   flex      DeepEP / HybridEP: each token once to every GPU holding one of its experts, and across
//             nodes once per node (to the GPU of the same local rank), forwarded inside the node
//             over NVLink: an inter-node all-to-all per rail beside an intra-node one.
enum class MoeDispatcher { kAllToAll, kAllGather, kFlex };
[[nodiscard]] std::string_view moe_dispatcher_name(MoeDispatcher d);  // "alltoall", "allgather", "flex"
[[nodiscard]] const std::vector<std::string>& moe_dispatcher_names();
// The dispatcher named `name` (one of moe_dispatcher_names()); alltoall for any other name.
[[nodiscard]] MoeDispatcher moe_dispatcher_from_name(std::string_view name);

[[nodiscard]] std::string_view schedule_name(PipelineSchedule s);        // "gpipe", "1f1b", ...
[[nodiscard]] std::string_view gradient_sync_name(GradientSync g);       // "all-reduce", "zero-1", "zero-3"
[[nodiscard]] std::string_view recompute_name(RecomputeMode r);          // "none", "selective", "full"
[[nodiscard]] std::string_view stage_program_name(StageProgram p);       // "megatron", "synthesised"
[[nodiscard]] const std::vector<std::string>& schedule_names();
// The schedule named `name` (one of schedule_names()); 1F1B for any other name.
[[nodiscard]] PipelineSchedule schedule_from_name(std::string_view name);

// What a model chunk holds: transformer blocks, or (Megatron-Core's pipeline layouts) only the
// embedding or only the head and loss, as chunks of their own.
enum class ChunkPart { kLayers, kEmbedding, kLoss };

// Transformer blocks [first, last], inclusive; or, for an embedding or loss chunk, none.
struct LayerRange {
  int first = 0;
  int last = 0;
  ChunkPart part = ChunkPart::kLayers;
  [[nodiscard]] int size() const { return part == ChunkPart::kLayers ? last - first + 1 : 0; }
  [[nodiscard]] bool layers() const { return part == ChunkPart::kLayers; }
  [[nodiscard]] static LayerRange embedding() { return {0, -1, ChunkPart::kEmbedding}; }
  [[nodiscard]] static LayerRange loss() { return {0, -1, ChunkPart::kLoss}; }
  friend bool operator==(const LayerRange&, const LayerRange&) = default;
};

struct StagePlan {
  std::vector<int> devices;         // cluster GPU indices; consecutive runs of `tp` form TP groups,
                                    // consecutive runs of tp x cp one data-parallel copy
  int tp = 1;                       // tensor-parallel width
  std::vector<LayerRange> chunks;   // one range per model chunk (several only for interleaved 1F1B); the
                                    // embedding runs with the pipeline's first chunk and the head with
                                    // its last, or as chunks of their own there
  int cp = 1;                       // context-parallel width: the copy's TP groups each hold 1/cp of
                                    // every sequence (Megatron-Core's rank order: TP, then CP, then DP)
  // Expert parallelism of the MoE layers, folded onto the same GPUs (Megatron-Core's parallel
  // folding): consecutive runs of ep x expert_tp GPUs each hold every expert once, expert_tp GPUs
  // sharing an expert's FFN, ep of them splitting the experts; an expert's copies across those runs
  // (and pipelines) synchronise its gradients.
  int ep = 1;
  int expert_tp = 1;

  [[nodiscard]] int group() const { return tp * cp; }  // devices of one data-parallel copy
  [[nodiscard]] int expert_group() const { return ep * expert_tp; }  // devices holding every expert once
  // Data-parallel copies that run in lockstep because expert groups span them: lcm(group, expert
  // group) / group.
  [[nodiscard]] int lockstep_copies() const;
  [[nodiscard]] int dp() const { return group() > 0 ? static_cast<int>(devices.size()) / group() : 0; }
  [[nodiscard]] int layer_count() const;
};

struct PipelinePlan {
  long micro_batches = 1;  // per iteration
  std::vector<StagePlan> stages;
};

// How tensors move between stage meshes (cross-mesh resharding, planner/resharding/): the
// boundary tensor of a micro-batch is laid out on each stage's copies (samples split over the
// copies, replicated over each TP group, or split over it along the sequence under sequence
// parallelism) and every receiving tile gets the slices it needs by `method`:
//   send-recv:        every receiving TP rank gets its whole tile from a sending rank;
//   local-all-gather: each receiving rank gets 1/tp of it, then the receiving TP group
//                     all-gathers (Megatron's scatter-gather; the default);
//   broadcast:        one broadcast per slice (a chain: the network once per host, then NVLink)
//                     from one sender to every rank holding the tile;
//   signal:           zero-byte messages that keep the dependencies (an upper bound).
// load_balance picks the senders: none (the rank matching the receiver's, as Megatron pairs
// them; for broadcast the first rank), gpu or nic (least bytes sent so far through it, over the
// whole program), order (sender and send order together, seeded by `seed`). overlap: transfers
// start when the tensor is produced (true) or when the receiving stage is about to run.
struct ReshardingChoice {
  ReshardMethod method = ReshardMethod::kLocalAllGather;
  LoadBalance load_balance = LoadBalance::kNone;
  bool overlap = true;
  uint64_t seed = 0;
};

struct HybridPlan {
  std::string model;    // names the plan was made for (checked against the run)
  std::string cluster;
  long micro_batch = 1;  // samples per micro-batch (split over a stage's data-parallel copies)
  PipelineSchedule schedule = PipelineSchedule::kOneFOneB;
  RecomputeMode recompute = RecomputeMode::kNone;
  RecomputeModules recompute_modules = kDefaultRecomputeModules;  // recompute: selective only
  // recompute: full only: the first this many transformer layers of every model chunk are recomputed,
  // the rest keep their activations (Megatron-Core's --recompute-method block --recompute-num-layers);
  // 0: every layer (--recompute-method uniform --recompute-num-layers 1).
  int recompute_layers = 0;
  // Transformer Engine's CPU offloading of activations (Megatron-Core --cpu-offloading
  // --cpu-offloading-num-layers N): the first N transformer layers copy what they keep for the backward
  // to host memory during the forward and back before their backward, and at most layers - N layers'
  // activations stay on the GPU (planner/hybrid/activation_offload.hpp). 0: none. Needs pipelines of one
  // stage and no recompute, as Megatron-Core does.
  int activation_offload_layers = 0;
  bool sequence_parallel = false;
  bool tp_comm_overlap = false;  // backward TP collectives under the weight-gradient GEMM (Megatron's async all-reduce)
  bool vocab_parallel = true;    // vocabulary-parallel cross-entropy; false: logits all-gathered, loss replicated
  StageProgram stage_program = StageProgram::kMegatron;
  GradientSync gradient_sync = GradientSync::kAllReduce;
  // Gradient buckets sync while the backward still runs (torch DDP, true) or after the device's
  // last backward (Megatron-LM's `--DDP-impl local` of 2021, false).
  bool grad_sync_overlap = true;
  // ZeRO-1 only: the updated weights' all-gather of each gradient bucket is issued at the start of
  // the next iteration on the data-parallel stream, bucket after bucket in forward order, and the
  // first forward of each block waits only for its own bucket (Megatron-Core's
  // --overlap-param-gather); false: one all-gather per bucket after the optimizer step, on the
  // critical path (Megatron-LM's distributed optimizer without it).
  bool overlap_param_gather = false;
  CpComm cp_comm = CpComm::kRing;  // stages with cp > 1
  ReshardingChoice resharding;
  std::vector<PipelinePlan> pipelines;
  double estimate_s = 0;  // the planner's closed-form estimate (0: none)
  // Megatron-Core's combined 1F1B (--overlap-moe-expert-parallel-comm): a stage runs a forward and
  // a backward of different micro-batches together where its schedule has them side by side, part
  // by part, so that each one's expert-parallel dispatch and combine run under the other's kernels.
  // Needs a stage with ep > 1 and a schedule that keeps the weight gradients in the backward.
  bool overlap_moe_expert_parallel_comm = false;
  // tp_comm_overlap: userbuffers (Megatron-Core's --tp-comm-overlap, Transformer Engine's
  // userbuffers): besides the backward overlap of tp_comm_overlap, the forward's all-gathers and
  // reduce-scatters are cut into chunks pipelined with their GEMMs (stage_work.hpp,
  // WorkPart::tp_fwd_exposed). Needs sequence parallelism; implies tp_comm_overlap.
  bool tp_comm_userbuffers = false;
  // Stages with ep > 1: how tokens are dispatched and combined (MoeDispatcher). Plans written before
  // the field existed meant alltoall.
  MoeDispatcher moe_dispatcher = MoeDispatcher::kAllToAll;

  [[nodiscard]] long samples() const;  // sum over pipelines of micro_batches x micro_batch
  // Passes of stage copies in one iteration (forward, backward, and weight-gradient ones where the
  // schedule splits them off): what a program of the plan writes before folding.
  [[nodiscard]] double stage_copy_passes() const;
  // "2 pipelines x 4 stages, tp 8/4, 1f1b[, micro-batch 2][, recompute full]" style description.
  [[nodiscard]] std::string shape() const;
};

// One problem found by check_hybrid_plan: a field path into the plan ("pipelines[0].stages[1].tp")
// and what is wrong with it.
struct PlanProblem {
  std::string field;
  std::string message;
};

// The first layer of each of `p`'s transformer-layer chunks, ascending (where recompute_layers counts from).
[[nodiscard]] std::vector<int> chunk_starts(const PipelinePlan& p);

// Every rule of docs/formats/hybrid-plan.md for `plan` on `model` and `cluster`: layers covered exactly once per
// pipeline and in order, devices in range and in at most one stage, tp dividing the stage and
// each TP group inside one node, heads divisible by tp, equal chunk counts for interleaved,
// micro-batches a multiple of the stages for interleaved, batch adding up to the model's global
// batch, a dtype every stage's GPU computes, one tp width per layer across copies, alike pipelines
// under zero-3 (its gathers run in lockstep), no sequence parallelism with synthesised stage
// programs (it is Megatron's). Empty: valid.
[[nodiscard]] std::vector<PlanProblem> check_hybrid_plan(const HybridPlan& plan, const ModelSpec& model,
                                                        const Cluster& cluster);

// "0-7,16": GPU indices and inclusive ranges; the text for a sorted list of devices.
[[nodiscard]] std::string format_devices(const std::vector<int>& devices);

}  // namespace hetsim
