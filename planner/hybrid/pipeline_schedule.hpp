// File: planner/hybrid/pipeline_schedule.hpp
// The order in which one pipeline stage runs its passes: GPipe (all forwards, then all
// backwards), 1F1B (P-i-1 warm-up forwards on stage i, then one forward one backward), interleaved
// 1F1B (Megatron's virtual stages: v model chunks per stage), eager 1F1B (the cross-mesh paper's
// overlap-friendly variant: 2(P-i)-2 warm-up forwards, so 2(P-i)-1 micro-batches in flight) and
// ZB-H1 (zero bubble: backward split into input-gradient B and weight-gradient W passes, W
// placed in the bubbles; stage_order() gives the order for equal pass times,
// zero_bubble_orders() for the stages' own). Stages are 0-based; stage i of P.
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

// Combined 1F1B (Megatron-Core's --overlap-moe-expert-parallel-comm): whether two steps side by side
// in a stage's order can run together: a forward and a backward of different micro-batches.
[[nodiscard]] bool run_together(const PipelineStep& a, const PipelineStep& b);

// Whether the schedule runs weight gradients as passes of their own.
[[nodiscard]] bool splits_weight_gradient(PipelineSchedule s);

// Every step of stage `stage` of `stages`, for `micro_batches` micro-batches and `chunks` chunks
// per stage (1 unless interleaved; interleaved needs micro_batches to be a multiple of stages).
// `extra_warmup` more warm-up forwards (1F1B-like schedules): Megatron-Core's combined 1F1B adds
// one, so that the forward and backward it runs together are of independent micro-batches.
[[nodiscard]] std::vector<PipelineStep> stage_order(PipelineSchedule s, int stage, int stages, int micro_batches,
                                                    int chunks, int extra_warmup = 0);
// The extra warm-up forwards of a plan's schedule (1 under overlap_moe_expert_parallel_comm).
[[nodiscard]] inline int extra_warmup(const HybridPlan& plan) { return plan.overlap_moe_expert_parallel_comm ? 1 : 0; }

// ZB-H1 (Qi et al., zero bubble pipeline parallelism) by list scheduling on the stages' pass
// times: whenever a stage is free it runs a ready backward (B), else a ready forward within
// 1F1B's activation limit (P - i in flight on stage i, at most P W passes held back), else a
// pending weight gradient (W); so W passes fill the bubbles and gradients go upstream right after
// B. With equal passes the bubble is (P - 1)(F + B - W). `f`, `b`, `w` per stage; `comm_s`
// between stages. One order per stage.
[[nodiscard]] std::vector<std::vector<PipelineStep>> zero_bubble_orders(int stages, int micro_batches,
                                                                        const std::vector<double>& f,
                                                                        const std::vector<double>& b,
                                                                        const std::vector<double>& w, double comm_s);

// The most micro-batches whose activations the stage holds at once under that order (forwards
// done whose backward has not yet run, counted per chunk).
[[nodiscard]] int max_in_flight(const std::vector<PipelineStep>& order);
// The same in closed form, without building the order (for any number of micro-batches).
[[nodiscard]] long in_flight_bound(PipelineSchedule s, int stage, int stages, long micro_batches, int chunks,
                                   int extra_warmup = 0);

}  // namespace hetsim
