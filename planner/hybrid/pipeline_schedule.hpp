// File: planner/hybrid/pipeline_schedule.hpp
// The order in which one pipeline stage runs its passes: GPipe (all forwards, then all
// backwards), 1F1B (P-i-1 warm-up forwards on stage i, then one forward one backward), interleaved
// 1F1B (Megatron's virtual stages: v model chunks per stage), eager 1F1B (the cross-mesh paper's
// overlap-friendly variant: 2(P-i)-2 warm-up forwards, so 2(P-i)-1 micro-batches in flight) and
// ZB-H1 (zero bubble: backward split into input-gradient B and weight-gradient W passes; the
// gradient goes upstream right after B, so the backward chain costs B per stage, not B + W). Stages are 0-based; stage i of P.
#pragma once

#include <vector>

#include "planner/hybrid/hybrid_plan.hpp"

namespace hetsim {

enum class PassKind { kForward, kBackward, kWeight };  // kBackward includes W unless the schedule splits it

struct PipelineStep {
  PassKind pass = PassKind::kForward;
  int micro_batch = 0;
  int chunk = 0;  // model chunk on this stage (interleaved); virtual stage = chunk x stages + stage
  friend bool operator==(const PipelineStep&, const PipelineStep&) = default;
};

// Whether the schedule runs weight gradients as passes of their own.
[[nodiscard]] bool splits_weight_gradient(PipelineSchedule s);

// Every step of stage `stage` of `stages`, for `micro_batches` micro-batches and `chunks` chunks
// per stage (1 unless interleaved; interleaved needs micro_batches to be a multiple of stages).
[[nodiscard]] std::vector<PipelineStep> stage_order(PipelineSchedule s, int stage, int stages, int micro_batches,
                                                    int chunks);

// The most micro-batches whose activations the stage holds at once under that order (forwards
// done whose backward has not yet run, counted per chunk).
[[nodiscard]] int max_in_flight(const std::vector<PipelineStep>& order);

}  // namespace hetsim
