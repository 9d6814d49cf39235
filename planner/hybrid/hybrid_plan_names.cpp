// File: planner/hybrid/hybrid_plan_names.cpp
// Names of the choices a hybrid plan makes: schedules, gradient sync, recompute, stage programs,
// context-parallel exchanges.
#include "planner/hybrid/hybrid_plan.hpp"

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

const std::vector<std::string>& moe_dispatcher_names() {
  static const std::vector<std::string> names = {"alltoall", "allgather", "flex"};
  return names;
}

MoeDispatcher moe_dispatcher_from_name(std::string_view name) {
  for (MoeDispatcher d : {MoeDispatcher::kAllGather, MoeDispatcher::kFlex}) {
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

}  // namespace hetsim
