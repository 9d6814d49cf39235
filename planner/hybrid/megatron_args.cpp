// File: planner/hybrid/megatron_args.cpp
#include "planner/hybrid/megatron_args.hpp"

#include <set>

#include "planner/hybrid/pipeline_schedule.hpp"

namespace hetsim {
namespace {

// The first reason Megatron cannot run `plan` as one shape on every GPU; empty when it can.
std::string not_one_shape(const HybridPlan& plan, const Cluster& cluster) {
  if (plan.pipelines.empty() || plan.pipelines.front().stages.empty()) return "the plan has no stage";
  std::set<std::string> types;
  for (const PipelinePlan& pl : plan.pipelines) {
    for (const StagePlan& st : pl.stages) {
      for (int d : st.devices) types.insert(cluster.device_of(d).name);
    }
  }
  if (types.size() > 1) return "it runs on " + std::to_string(types.size()) + " GPU types; Megatron runs one plan shape on every GPU";
  const PipelinePlan& first = plan.pipelines.front();
  const StagePlan& s0 = first.stages.front();
  for (size_t p = 0; p < plan.pipelines.size(); ++p) {
    const PipelinePlan& pl = plan.pipelines[p];
    if (pl.stages.size() != first.stages.size()) return "its pipelines have different stage counts";
    if (pl.micro_batches != first.micro_batches) return "its pipelines run different micro-batch counts";
    for (size_t s = 0; s < pl.stages.size(); ++s) {
      const StagePlan& st = pl.stages[s];
      if (st.tp != s0.tp || st.cp != s0.cp || st.ep != s0.ep || st.expert_tp != s0.expert_tp) {
        return "its stages have different tp, cp, ep or expert_tp widths";
      }
      if (st.devices.size() != s0.devices.size()) return "its stages have different GPU counts";
      if (st.chunks.size() != s0.chunks.size()) return "its stages have different chunk counts";
      if (st.chunks != first.stages[s].chunks) return "its pipelines split the layers differently";
    }
  }
  if (plan.stage_program != StageProgram::kMegatron) return "its stages run synthesised programs, not Megatron's tensor parallelism";
  if (!plan.vocab_parallel) return "it gathers the logits; Megatron's loss is always vocabulary-parallel";
  if (plan.gradient_sync == GradientSync::kZero3 && first.stages.size() > 1) {
    return "it shards weights (zero-3) over a pipeline; Megatron-LM's torch FSDP2 (--use-torch-fsdp2) does not run with pipeline parallelism";
  }
  if (plan.schedule != PipelineSchedule::kOneFOneB && plan.schedule != PipelineSchedule::kInterleaved) {
    return "Megatron has no " + std::string(schedule_name(plan.schedule)) + " schedule (1f1b and interleaved-1f1b only)";
  }
  if (plan.micro_batch % s0.dp() != 0) return "its micro-batch does not split evenly over a stage's data-parallel copies";
  if (plan.overlap_moe_expert_parallel_comm && plan.recompute == RecomputeMode::kFull) {
    return "Megatron-Core refuses the experts' all-to-all overlap (combined 1F1B) with full recomputation";
  }
  if (plan.overlap_moe_expert_parallel_comm && first.stages.size() > 1 && plan.schedule != PipelineSchedule::kInterleaved) {
    return "Megatron-Core runs the experts' all-to-all overlap (combined 1F1B) over pipeline stages only with virtual "
           "pipeline stages (interleaved-1f1b)";
  }
  return "";
}

// The virtual stages in model order (chunk c of stage s is virtual stage c x P + s) as Megatron-Core's
// --pipeline-model-parallel-layout: E the embedding, t a decoder layer, m a multi-token prediction
// layer, L the loss, | between stages; empty when the layers are not in order. `uniform`: every
// virtual stage has the same layers, the embedding with the first and the loss with the last, and no
// MTP layer (no layout needed; Megatron places MTP layers itself only after an even split of the
// others, which this is not). `why`: set where Megatron cannot place the MTP layers as the plan does.
std::string layout(const PipelinePlan& pl, const ModelSpec& model, bool& uniform, std::string& why) {
  const size_t P = pl.stages.size(), V = pl.stages.front().chunks.size();
  const long main = main_layers(model);
  std::string out;
  int next = 0;
  std::set<int> sizes;
  std::set<size_t> mtp_stages;  // virtual stages holding MTP layers
  bool part_chunks = false;
  for (size_t j = 0; j < P * V; ++j) {
    const LayerRange& r = pl.stages[j % P].chunks[j / P];
    if (j > 0) out += "|";
    if (j == 0) out += "E";
    if (r.layers()) {
      if (r.first != next) return "";
      for (int l = r.first; l <= r.last; ++l) {
        out += l < main ? 't' : 'm';
        if (l >= main) mtp_stages.insert(j);
      }
      next = r.last + 1;
      sizes.insert(r.size());
    } else {
      part_chunks = true;
      if ((r.part == ChunkPart::kEmbedding && j != 0) || (r.part == ChunkPart::kLoss && j != P * V - 1)) return "";
    }
    if (j == P * V - 1) out += "L";
  }
  if (next != model.layers) return "";
  // Megatron-Core keeps every MTP layer in one virtual stage, the last of its pipeline rank.
  if (mtp_stages.size() > 1 || (!mtp_stages.empty() && *mtp_stages.begin() / P != V - 1)) {
    why = "its multi-token prediction layers are not all in one virtual stage, the last of its pipeline rank, where "
          "Megatron-Core places them";
    return "";
  }
  uniform = !part_chunks && sizes.size() == 1 && model.mtp_layers == 0;
  return out;
}

// A hybrid model's layers as Megatron-Core's --hybrid-layer-pattern: the decoder's layers in
// hybrid_pattern's characters, | between virtual stages, then / and each MTP module's pattern (its
// depths). Empty, with `why`, where the plan is not that: a stage of the embedding or the loss alone
// (the pattern gives every segment layers), or MTP layers anywhere but the last virtual stage.
std::string hybrid_layer_pattern(const PipelinePlan& pl, const ModelSpec& model, std::string& why) {
  const size_t P = pl.stages.size(), V = pl.stages.front().chunks.size();
  const long main = main_layers(model), module = mtp_module_layers(model);
  for (const StagePlan& st : pl.stages) {
    for (const LayerRange& r : st.chunks) {
      if (r.layers()) continue;
      why = "a pipeline stage holds the embedding or the loss alone, which --hybrid-layer-pattern cannot say (every segment "
            "has layers)";
      return "";
    }
  }
  std::string out;
  int next = 0;
  for (size_t j = 0; j < P * V; ++j) {
    const LayerRange& r = pl.stages[j % P].chunks[j / P];
    if (r.first != next) return "";
    if (r.last >= main && (j != P * V - 1 || r.first >= main)) {
      why = "its multi-token prediction layers are not in the last virtual stage beside decoder layers";
      return "";
    }
    if (j > 0) out += "|";
    out.append(model.hybrid_pattern, static_cast<size_t>(r.first), static_cast<size_t>(std::min<long>(r.last + 1, main) - r.first));
    next = r.last + 1;
  }
  if (next != model.layers) return "";
  for (long d = 0; d < model.mtp_layers; ++d) out += "/" + model.hybrid_pattern.substr(static_cast<size_t>(main + d * module), static_cast<size_t>(module));
  return out;
}

std::string_view fp8_args(GemmPrecision p) {
  switch (p) {
    case GemmPrecision::kDtype: return "";
    case GemmPrecision::kFp8Delayed: return " --fp8-format hybrid --fp8-recipe delayed";
    case GemmPrecision::kFp8Current: return " --fp8-format hybrid --fp8-recipe tensorwise";
    case GemmPrecision::kMxfp8: return " --fp8-format e4m3 --fp8-recipe mxfp8";
    case GemmPrecision::kNvfp4: return " --fp4-format e2m1 --fp4-recipe nvfp4";
  }
  return "";
}

}  // namespace

MegatronArgs megatron_args(const HybridPlan& plan, const ModelSpec& model, const Cluster& cluster) {
  MegatronArgs out;
  out.why_not = not_one_shape(plan, cluster);
  if (!out.why_not.empty()) return out;
  if (model.training.kernels == TrainingKernels::kEager) {  // Megatron runs its fused kernels, not these
    out.why_not = "the model trains with PyTorch's eager kernels (training.kernels: eager); Megatron runs its fused "
                  "kernels, faster than the times this plan was chosen on: plan with training.kernels fused for Megatron";
    return out;
  }
  const PipelinePlan& pl = plan.pipelines.front();
  const StagePlan& st = pl.stages.front();
  bool uniform = false;
  std::string why;
  const bool hybrid = !model.hybrid_pattern.empty();
  const std::string stages = hybrid ? hybrid_layer_pattern(pl, model, why) : layout(pl, model, uniform, why);
  if (stages.empty()) {
    out.why_not = !why.empty() ? why : "its chunks do not hold the layers in Megatron's order (chunk c of stage s holds virtual stage c x stages + s)";
    return out;
  }
  const auto arg = [&](const char* name, long value) { out.args.append(" --").append(name).append(" ").append(std::to_string(value)); };
  const auto flag = [&](bool on, const char* name) {
    if (on) out.args.append(" --").append(name);
  };
  arg("tensor-model-parallel-size", st.tp);
  arg("pipeline-model-parallel-size", static_cast<long>(pl.stages.size()));
  if (st.cp > 1) arg("context-parallel-size", st.cp);
  if (st.ep > 1) arg("expert-model-parallel-size", st.ep);
  if (st.ep > 1 || st.expert_tp > 1) arg("expert-tensor-parallel-size", st.expert_tp);
  if (st.ep > 1) out.args.append(" --moe-token-dispatcher-type ").append(moe_dispatcher_name(plan.moe_dispatcher));
  const size_t chunks = st.chunks.size();
  // A hybrid model's pattern gives its layers, their stages (virtual ones included) and its MTP
  // depths; Megatron-Core refuses --num-layers' and the layout's arguments beside it.
  if (hybrid) out.args.append(" --hybrid-layer-pattern \"").append(stages).append("\"");
  if (!hybrid && uniform && chunks > 1) arg("num-virtual-stages-per-pipeline-rank", static_cast<long>(chunks));
  if (!hybrid && !uniform) out.args.append(" --pipeline-model-parallel-layout \"").append(stages).append("\"");
  if (!hybrid) arg("num-layers", main_layers(model));
  if (model.mtp_layers > 0) arg("mtp-num-layers", model.mtp_layers);
  flag(model.mtp_layers > 1 && model.mtp_shared, "mtp-use-repeated-layer");
  arg("seq-length", model.seq_len);
  arg("micro-batch-size", plan.micro_batch / st.dp());
  arg("global-batch-size", plan.samples());
  out.args += model.training.dtype == DType::kBf16 ? " --bf16" : model.training.dtype == DType::kFp16 ? " --fp16" : "";
  out.args += fp8_args(model.training.gemm_precision);
  // training.dtype_layers (gemm_precision_by_op is a Transformer Engine quantization recipe file, not an argument).
  const long first_bf16 = model.training.dtype_layers_first, last_bf16 = model.training.dtype_layers_last;
  flag(model.training.low_precision_gemms() && first_bf16 + last_bf16 > 0, "first-last-layers-bf16");
  if (model.training.low_precision_gemms() && first_bf16 + last_bf16 > 0) {
    arg("num-layers-at-start-in-bf16", first_bf16);
    arg("num-layers-at-end-in-bf16", last_bf16);
  }
  flag(model.training.fp32_grads && model.training.dtype != DType::kBf16, "accumulate-allreduce-grads-in-fp32");
  flag(model.training.fp8_param_gather, "fp8-param-gather");
  flag(plan.sequence_parallel, "sequence-parallel");
  if (plan.recompute == RecomputeMode::kSelective) out.args += " --recompute-granularity selective";
  if (plan.recompute == RecomputeMode::kSelective && plan.recompute_modules != kDefaultRecomputeModules) {
    out.args += " --recompute-modules " + recompute_modules_text(plan.recompute_modules, " ");
  }
  if (plan.recompute == RecomputeMode::kFull) {
    out.args += plan.recompute_layers > 0
                    ? " --recompute-granularity full --recompute-method block --recompute-num-layers " + std::to_string(plan.recompute_layers)
                    : " --recompute-granularity full --recompute-method uniform --recompute-num-layers 1";
  }
  // (arguments.py turns --cpu-offloading on where this count is above 0.)
  if (plan.activation_offload_layers > 0) out.args += " --cpu-offloading-num-layers " + std::to_string(plan.activation_offload_layers);
  flag(plan.gradient_sync == GradientSync::kZero1, "use-distributed-optimizer");
  // Weights sharded (zero-3): Megatron-LM's torch FSDP2, without the fused weight-gradient
  // accumulation it cannot run (AMD's Primus FSDP recipes set both).
  flag(plan.gradient_sync == GradientSync::kZero3, "use-torch-fsdp2");
  flag(plan.gradient_sync == GradientSync::kZero3, "no-gradient-accumulation-fusion");
  flag(plan.grad_sync_overlap, "overlap-grad-reduce");
  flag(plan.gradient_sync == GradientSync::kZero1 && plan.overlap_param_gather, "overlap-param-gather");
  flag(plan.tp_comm_userbuffers, "tp-comm-overlap");
  if (st.cp > 1) out.args += plan.cp_comm == CpComm::kRing ? " --cp-comm-type p2p" : " --cp-comm-type a2a";
  flag(plan.overlap_moe_expert_parallel_comm, "overlap-moe-expert-parallel-comm");
  out.args.erase(0, 1);  // the leading space
  return out;
}

}  // namespace hetsim
