// File: planner/hybrid/hybrid_plan_names.cpp
// Names of the choices a hybrid plan makes: schedules, gradient sync, recompute, stage programs,
// context-parallel exchanges, token dispatchers; and a plan's one-line description (shape()).
#include "planner/hybrid/hybrid_plan.hpp"

#include <algorithm>
#include <set>

#include "base/text.hpp"

namespace hetsim {

std::string_view schedule_name(PipelineSchedule s) {
  switch (s) {
    case PipelineSchedule::kGpipe: return "gpipe";
    case PipelineSchedule::kOneFOneB: return "1f1b";
    case PipelineSchedule::kInterleaved: return "interleaved-1f1b";
    case PipelineSchedule::kEager: return "eager-1f1b";
    case PipelineSchedule::kZeroBubble: return "zero-bubble";
  }
  return "?";
}

std::string_view cp_comm_name(CpComm c) { return c == CpComm::kAllToAll ? "all-to-all" : "ring"; }

std::string_view moe_dispatcher_name(MoeDispatcher d) {
  switch (d) {
    case MoeDispatcher::kAllToAll: return "alltoall";
    case MoeDispatcher::kAllGather: return "allgather";
    case MoeDispatcher::kFlex: return "flex";
  }
  return "?";
}

constexpr MoeDispatcher kDispatchers[] = {MoeDispatcher::kAllToAll, MoeDispatcher::kAllGather, MoeDispatcher::kFlex};

const std::vector<std::string>& moe_dispatcher_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (MoeDispatcher d : kDispatchers) out.emplace_back(moe_dispatcher_name(d));
    return out;
  }();
  return names;
}

MoeDispatcher moe_dispatcher_from_name(std::string_view name) {
  for (MoeDispatcher d : kDispatchers) {
    if (name == moe_dispatcher_name(d)) return d;
  }
  return MoeDispatcher::kAllToAll;
}

std::string_view gradient_sync_name(GradientSync g) {
  switch (g) {
    case GradientSync::kAllReduce: return "all-reduce";
    case GradientSync::kZero1: return "zero-1";
    case GradientSync::kZero3: return "zero-3";
  }
  return "?";
}

std::string_view recompute_name(RecomputeMode r) {
  switch (r) {
    case RecomputeMode::kNone: return "none";
    case RecomputeMode::kSelective: return "selective";
    case RecomputeMode::kFull: return "full";
  }
  return "?";
}

const std::vector<std::string>& recompute_module_names() {
  static const std::vector<std::string> names = {"core_attn", "layernorm", "moe_act", "mla_up_proj", "mlp", "shared_experts", "moe"};
  return names;
}

std::string recompute_modules_text(RecomputeModules set, std::string_view sep) {
  std::string out;
  const std::vector<std::string>& names = recompute_module_names();
  for (size_t i = 0; i < names.size(); ++i) {
    if ((set & (1u << i)) == 0) continue;
    if (!out.empty()) out += sep;
    out += names[i];
  }
  return out;
}

std::string_view stage_program_name(StageProgram p) { return p == StageProgram::kSynthesised ? "synthesised" : "megatron"; }

const std::vector<std::string>& schedule_names() {
  static const std::vector<std::string> names = {"gpipe", "1f1b", "interleaved-1f1b", "eager-1f1b", "zero-bubble"};
  return names;
}

PipelineSchedule schedule_from_name(std::string_view name) {
  const std::vector<std::string>& names = schedule_names();
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) return static_cast<PipelineSchedule>(i);
  }
  return PipelineSchedule::kOneFOneB;
}

std::string HybridPlan::shape() const {
  std::string out = counted(pipelines.size(), "pipeline") + " x ";
  std::vector<std::string> stage_counts;
  std::set<size_t> distinct;
  for (const PipelinePlan& p : pipelines) {
    stage_counts.push_back(std::to_string(p.stages.size()));
    distinct.insert(p.stages.size());
  }
  if (distinct.size() <= 1) {
    out += counted(distinct.empty() ? 0 : *distinct.begin(), "stage");
  } else {
    std::string joined;
    for (const std::string& c : stage_counts) joined += (joined.empty() ? "" : "+") + c;
    out += joined + " stages";
  }
  // Each width as the stages have it: one value, or each distinct one in stage order ("tp 2/4",
  // "dp 4/2") where stages differ.
  const auto widths = [&](const char* name, auto of, bool always) {
    std::vector<int> seen;
    for (const PipelinePlan& p : pipelines) {
      for (const StagePlan& st : p.stages) {
        if (std::find(seen.begin(), seen.end(), of(st)) == seen.end()) seen.push_back(of(st));
      }
    }
    if (seen.empty() || (!always && seen.size() == 1 && seen[0] == 1)) return;
    out.append(", ").append(name).append(" ");
    for (size_t i = 0; i < seen.size(); ++i) {
      if (i > 0) out += '/';
      out += std::to_string(seen[i]);
    }
  };
  widths("tp", [](const StagePlan& st) { return st.tp; }, true);
  widths("cp", [](const StagePlan& st) { return st.cp; }, false);
  if (cp_comm == CpComm::kAllToAll && out.find(", cp ") != std::string::npos) out += " (all-to-all)";
  widths("ep", [](const StagePlan& st) { return st.ep; }, false);
  widths("expert tp", [](const StagePlan& st) { return st.expert_tp; }, false);
  if (moe_dispatcher != MoeDispatcher::kAllToAll) out += ", " + std::string(moe_dispatcher_name(moe_dispatcher)) + " dispatcher";
  widths("dp", [](const StagePlan& st) { return st.dp(); }, false);
  size_t chunks = 0;
  int dp = 0;
  for (const PipelinePlan& p : pipelines) {
    for (const StagePlan& st : p.stages) {
      chunks = std::max(chunks, st.chunks.size());
      dp = std::max(dp, st.dp());
    }
  }
  if (chunks > 1) out += ", " + std::to_string(chunks) + " chunks";
  out += ", " + std::string(schedule_name(schedule));
  if (micro_batch > 1) out += ", micro-batch " + std::to_string(micro_batch);
  if (recompute != RecomputeMode::kNone) out += ", recompute " + std::string(recompute_name(recompute));
  if (recompute == RecomputeMode::kSelective && recompute_modules != kDefaultRecomputeModules) {
    out += " (" + recompute_modules_text(recompute_modules) + ")";
  }
  if (recompute == RecomputeMode::kFull && recompute_layers > 0) {
    out += recompute_layers == 1 ? " (first layer of each chunk)" : " (first " + std::to_string(recompute_layers) + " layers of each chunk)";
  }
  if (activation_offload_layers > 0) {
    out += ", activations of " + std::to_string(activation_offload_layers) + (activation_offload_layers == 1 ? " layer offloaded" : " layers offloaded");
  }
  if (sequence_parallel) out += ", sequence parallel";
  if (gradient_sync != GradientSync::kAllReduce) out.append(", ").append(gradient_sync_name(gradient_sync));
  if (tp_comm_userbuffers) out += ", tp comm overlap (userbuffers)";
  else if (tp_comm_overlap) out += ", tp comm overlap";
  if (!vocab_parallel) out += ", logits gathered";
  // Gradients are synchronised across every copy of a block: a stage's data-parallel ranks and the
  // other pipelines' copies of it (gradient_sync.cpp).
  const bool synced = dp > 1 || pipelines.size() > 1;
  if (!grad_sync_overlap && synced) out += ", grad sync after backward";
  if (overlap_param_gather && synced) out += ", param gather overlapped";
  if (overlap_moe_expert_parallel_comm) out += ", expert all-to-all overlapped";
  if (stage_program == StageProgram::kSynthesised) out += ", synthesised stages";
  if (resharding.method != ReshardMethod::kLocalAllGather || resharding.load_balance != LoadBalance::kNone) {
    out.append(", ").append(method_name(resharding.method)).append(" resharding");
    if (resharding.load_balance != LoadBalance::kNone) out.append(" (").append(load_balance_name(resharding.load_balance)).append(")");
  }
  return out;
}

}  // namespace hetsim
