// File: studies/validation/run_file.hpp
// Validation runs (docs/formats/validation-runs.md): published measurements and how to reproduce each
// in hetsim, read from a YAML list. A run is one of
//   collective: one collective on a cluster (nccl-tests conventions)       busbw_Bps, algbw_Bps, time_s
//   matmul:     one matrix product on one device type                      tflops, time_s
//   layer:      one transformer layer on a tensor-parallel group           forward_s, backward_s,
//                                                                          layer_time_s, activation_bytes
//   training:   an iteration of a model on a cluster, with a plan file,    iteration_time_s, samples_per_s,
//               a strategy, or a Megatron-style uniform grid (`megatron`)  tokens_per_s, tflops_per_gpu,
//                                                                          mfu, peak_memory_bytes
// Measured figures are plain numbers in the unit their key names.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "base/input_error.hpp"
#include "planner/hybrid/hybrid_plan.hpp"
#include "sim/program.hpp"
#include "workloads/dtype.hpp"

namespace hetsim {

enum class RunKind { kCollective, kMatmul, kLayer, kTraining };
[[nodiscard]] std::string_view run_kind_name(RunKind k);  // "collective", "matmul", "layer", "training"

struct CollectiveRun {
  CollectiveOp op = CollectiveOp::kAllReduce;
  double size_bytes = 0;
  std::string group = "all";  // the syntax of --group
  Algorithm algorithm = Algorithm::kAuto;
  Diagnostic group_where;     // file:line of `group` (the collective's where absent), for errors found later
  Diagnostic algorithm_where;  // the same of `algorithm`: whether it runs here is known with the cluster
};

struct MatmulRun {
  std::string device;  // shipped device name
  // The products timed: one (m, n, k, batch), or `shapes`, whose measured figures are of them all
  // together (a framework's per-layer GEMM benchmark reports the sum of a layer's products).
  std::vector<GemmShape> shapes;
  DType dtype = DType::kBf16;
  // nn: torch.matmul of two plain matrices (cuBLAS's NN product, the default); tn: x·Wᵀ, a linear
  // layer's forward (cuBLASLt's TN layout, the only one its FP8 GEMMs take on Hopper).
  bool linear = false;
  Diagnostic device_where, dtype_where;  // file:line of those fields, for errors found later
};

// A Megatron-LM run: tensor x pipeline x data parallelism with equal layers per stage, ranks
// ordered TP fastest, then data parallel, then pipeline (Megatron's default), one pipeline per
// data-parallel replica.
struct MegatronGrid {
  int tp = 1;
  int pp = 1;
  long micro_batch = 1;
  PipelineSchedule schedule = PipelineSchedule::kOneFOneB;
  int chunks = 1;  // model chunks per stage (interleaved-1f1b)
  RecomputeMode recompute = RecomputeMode::kNone;
  RecomputeModules recompute_modules = kDefaultRecomputeModules;  // recompute: selective only
  int recompute_layers = 0;  // recompute: full only (HybridPlan::recompute_layers)
  int activation_offload_layers = 0;  // HybridPlan::activation_offload_layers
  bool sequence_parallel = false;
  bool tp_comm_overlap = false;  // Megatron's asynchronous TP all-reduce (on by default from Sep 2021)
  GradientSync gradient_sync = GradientSync::kAllReduce;
  bool grad_sync_overlap = true;  // false: Megatron-LM's `--DDP-impl local` (all-reduce after the backward)
  int cp = 1;                      // context parallelism (ranks ordered TP, CP, DP, PP as Megatron-Core does)
  CpComm cp_comm = CpComm::kRing;
  bool overlap_param_gather = false;  // Megatron-Core --overlap-param-gather (zero-1)
  bool overlap_moe_expert_parallel_comm = false;  // Megatron-Core --overlap-moe-expert-parallel-comm (ep > 1)
  bool tp_comm_userbuffers = false;  // tp_comm_overlap: userbuffers (Megatron-Core --tp-comm-overlap)
  // Megatron-Core's account_for_embedding_in_pipeline_split / account_for_loss_in_pipeline_split:
  // the embedding and the loss count as one layer each when layers are spread over the virtual
  // stages, so the first and last virtual stage hold one transformer layer less.
  bool embedding_in_split = false;
  bool loss_in_split = false;
  int ep = 1;         // expert parallelism (models with a moe: block), expert ranks ordered expert TP, EP, DP
  int expert_tp = 1;
  MoeDispatcher moe_dispatcher = MoeDispatcher::kAllToAll;  // Megatron-Core --moe-token-dispatcher-type (ep > 1)
  friend bool operator==(const MegatronGrid&, const MegatronGrid&) = default;
};

struct LayerRun {
  std::filesystem::path model;  // resolved file
  int tp = 1;
  Diagnostic tp_where;  // file:line of `tp` (the layer's where absent), for errors found with the cluster
  bool sequence_parallel = false;
  bool tp_comm_overlap = false;
  RecomputeMode recompute = RecomputeMode::kNone;
  RecomputeModules recompute_modules = kDefaultRecomputeModules;
  Diagnostic recompute_where;  // file:line of `recompute_modules` (else `recompute`, else the layer's), for errors found with the model
  long micro_batch = 1;
};

// How measured TFLOP/s per GPU were counted: hetsim's model FLOPs (forward + backward), or
// Narayanan et al. 2021 eq. (3): 96·B·s·l·h²·(1 + s/6h + V/16lh) per iteration (counts the
// forward twice: full recompute), which Megatron-LM papers report.
enum class FlopsFormula { kModel, kNarayanan2021 };

// Which peak memory a measured peak_memory_bytes is: of which GPU, and counting what.
struct MeasuredMemory {
  static constexpr int kHighest = -1;  // the highest peak over the GPUs (the default)
  static constexpr int kLast = -2;     // the last GPU (Megatron-LM logs rank world_size - 1's)
  int gpu = kHighest;                  // or a GPU's index
  // false: everything hetsim counts on the device, the runtime reserve included (nvidia-smi);
  // true: what PyTorch's caching allocator handed out (max allocated): the reserve left out.
  bool allocated = false;
  friend bool operator==(const MeasuredMemory&, const MeasuredMemory&) = default;
};

struct TrainingRun {
  std::filesystem::path model;  // resolved file
  std::filesystem::path plan;   // empty unless `plan`
  std::string strategy;         // empty unless `strategy`
  std::optional<MegatronGrid> megatron;
  FlopsFormula flops = FlopsFormula::kModel;
  long global_batch = 0;  // > 0: replaces the model file's
  MeasuredMemory memory;  // `memory: {gpu: max | last | N, counts: device | allocated}`
  friend bool operator==(const TrainingRun&, const TrainingRun&) = default;
};

struct MeasuredFigure {
  std::string key;  // e.g. "busbw_Bps"
  double value = 0;
  Diagnostic where{};  // file:line:column of its value, for errors found with the device (a rate above its peak)
};

struct ValidationRun {
  std::string name;
  std::string source;
  std::string class_name;        // calibration class; empty: derived from the run (calibration.hpp)
  // The measurement campaign it came from, which leave-one-source-out cross-validation leaves out
  // as a whole (hetsim calibrate): `source_group`, else the whole `source` text.
  std::string source_group;
  // The calibration its software stack takes (--calibration's values: none, shipped, a profile);
  // empty: the one in force. A run of another era than the shipped profile of its GPU says so.
  std::string calibration;
  std::filesystem::path cluster;  // resolved file; empty for matmul runs
  int nodes = 0;                  // > 0: the cluster's (single) node type has this many nodes
  // > 0: the nodes are placed this many to an NVLink domain (Slurm's --segment; a rack's other
  // nodes are not the run's), on a node type whose domains span several nodes. 0: each domain full.
  int segment = 0;
  RunKind kind = RunKind::kTraining;
  CollectiveRun collective;
  MatmulRun matmul;
  LayerRun layer;
  TrainingRun training;
  std::vector<MeasuredFigure> measured;  // in the order of the file
  Diagnostic where;                      // file:line of the entry, for messages found later
  Diagnostic nodes_where, segment_where, megatron_where;  // of its `nodes`, `segment` and `megatron` fields (the entry where absent)
  Diagnostic global_batch_where;           // of its `global_batch` (the entry where absent): a plan too large for it
  Diagnostic memory_where;                 // of its `memory.gpu` field (the entry, or `memory`, where absent)
};

// The figures a kind of run can be compared on (keys of `measured`).
[[nodiscard]] const std::vector<std::string>& measurable(RunKind k);

// Reads and checks a run file. Cluster, model and plan paths are relative to the run file's
// folder, or name shipped inputs. Throws InputError listing every problem (file:line:col, field).
[[nodiscard]] std::vector<ValidationRun> load_runs(const std::filesystem::path& file);

// The runs of every file, in order. A name given in two files (or one file given twice) is refused
// at its later run: a run counted twice would weigh twice in a class's errors and in a fit.
[[nodiscard]] std::vector<ValidationRun> load_run_files(const std::vector<std::string>& files);

}  // namespace hetsim
