// File: tests/planner/hybrid/moe_overlap_test.cpp
// Megatron-Core's combined 1F1B (overlap_moe_expert_parallel_comm): one more warm-up forward, then
// a forward and a backward of independent micro-batches run together, each one's expert
// all-to-alls on the expert stream under the other's kernels.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "planner/hybrid/hybrid_plan_file.hpp"
#include "planner/hybrid/hybrid_planner.hpp"
#include "planner/hybrid/megatron_args.hpp"
#include "planner/hybrid/pipeline_schedule.hpp"
#include "one_stage_plan.hpp"
#include "test_support.hpp"

namespace hetsim {
namespace {

TEST(CombinedOneFOneB, OneMoreWarmupForwardPairsIndependentMicroBatches) {
  // No pipelining (one stage, 1F1B): F0 B0 F1 B1 ... becomes F0, then F1 with B0, F2 with B1, ...
  // as Megatron-Core's combined_1f1b_schedule_for_no_pipelining runs it.
  const std::vector<PipelineStep> o = stage_order(PipelineSchedule::kOneFOneB, 0, 1, 4, 1, 1);
  const std::vector<PipelineStep> want = {{PassKind::kForward, 0, 0},  {PassKind::kForward, 1, 0},
                                          {PassKind::kBackward, 0, 0}, {PassKind::kForward, 2, 0},
                                          {PassKind::kBackward, 1, 0}, {PassKind::kForward, 3, 0},
                                          {PassKind::kBackward, 2, 0}, {PassKind::kBackward, 3, 0}};
  EXPECT_EQ(o, want);
  EXPECT_TRUE(run_together(o[1], o[2]));
  EXPECT_FALSE(run_together(o[0], o[1]));  // two forwards
  EXPECT_FALSE(run_together({PassKind::kForward, 2, 0}, {PassKind::kBackward, 2, 0}));  // one depends on the other
  // The extra forward is one more micro-batch in flight, in the order and in the closed form.
  for (int stage = 0; stage < 4; ++stage) {
    for (auto [s, chunks] : {std::pair{PipelineSchedule::kOneFOneB, 1}, std::pair{PipelineSchedule::kInterleaved, 2}}) {
      const std::vector<PipelineStep> order = stage_order(s, stage, 4, 8, chunks, 1);
      EXPECT_EQ(max_in_flight(order), max_in_flight(stage_order(s, stage, 4, 8, chunks)) + 1);
      EXPECT_EQ(in_flight_bound(s, stage, 4, 8, chunks, 1), max_in_flight(order));
    }
  }
}

struct OverlapRun {
  double time_s = 0;
  double ep_s = 0;           // expert all-to-alls on GPU 0, summed
  double hidden_ep_s = 0;    // of that, under a kernel of another micro-batch on GPU 0
  bool all_on_ep_stream = true;
};

// Mixtral 8x7B (4 layers) on 16 H100: one stage, tp 1, ep 8, two expert groups in lockstep.
OverlapRun mixtral_ep8(bool combined, PipelineSchedule schedule = PipelineSchedule::kOneFOneB) {
  ModelSpec m = load_model(test::shipped("workloads", "mixtral-8x7b"));
  m.layers = 4;
  m.seq_len = 4096;
  m.training.global_batch = 64;
  Cluster c = test::fixture_cluster("dgx-h100-16");
  HybridPlan p = test::one_stage_plan(16, 4, 4, 16, 1, 8);
  p.schedule = schedule;
  p.gradient_sync = GradientSync::kZero1;
  p.overlap_moe_expert_parallel_comm = combined;
  EXPECT_EQ(check_hybrid_plan(p, m, c).size(), 0u);
  HybridPlanner planner(m, c, CostModel{}, SimOptions{});
  const Evaluation ev = planner.evaluate(p, "ep8");
  EXPECT_TRUE(ev.report.feasible) << ev.report.infeasible_reason;
  OverlapRun r;
  r.time_s = ev.report.iteration_time_s;
  const auto micro_batch = [](const std::string& label) { return label.substr(0, label.find('.', label.find(".mb") + 1)); };
  for (size_t i = 0; i < ev.program.tasks.size(); ++i) {
    const Task& t = ev.program.tasks[i];
    const auto* a2a = std::get_if<CollectiveTask>(&t.body);
    if (a2a == nullptr || a2a->op != CollectiveOp::kAllToAll || a2a->group.front() != 0) continue;
    r.all_on_ep_stream = r.all_on_ep_stream && a2a->stream == CommStream::kExpert;
    const TaskTiming& at = ev.result.tasks[i];
    r.ep_s += at.end_s - at.start_s;
    for (size_t k = 0; k < ev.program.tasks.size(); ++k) {
      const auto* comp = std::get_if<ComputeTask>(&ev.program.tasks[k].body);
      if (comp == nullptr || comp->device != 0 || micro_batch(ev.program.tasks[k].label) == micro_batch(t.label)) continue;
      const TaskTiming& ct = ev.result.tasks[k];
      r.hidden_ep_s += std::max(0.0, std::min(at.end_s, ct.end_s) - std::max(at.start_s, ct.start_s));
    }
  }
  return r;
}

TEST(CombinedOneFOneB, ExpertAllToAllsRunUnderAnotherMicroBatchsKernels) {
  const OverlapRun plain = mixtral_ep8(false), combined = mixtral_ep8(true);
  // Without it, every all-to-all blocks its GPU's compute: nothing runs beside it.
  EXPECT_GT(plain.ep_s, 0);
  EXPECT_EQ(plain.hidden_ep_s, 0);
  EXPECT_TRUE(plain.all_on_ep_stream);
  // With it, the steady state's pairs (F1 with B0, F2 with B1, F3 with B2) hide their all-to-alls
  // under each other's kernels; F0 and B3 run alone. The iteration gets shorter, by at most the
  // all-to-all time the plain run spends.
  EXPECT_TRUE(combined.all_on_ep_stream);
  EXPECT_GT(combined.hidden_ep_s, 0.5 * combined.ep_s);  // 6 of the 8 passes are paired
  EXPECT_LT(combined.time_s, plain.time_s);
  EXPECT_GT(combined.time_s, plain.time_s - plain.ep_s);
}

TEST(CombinedOneFOneB, RoundTripsThroughThePlanFileAndRefusesWhatCannotRun) {
  ModelSpec m = load_model(test::shipped("workloads", "mixtral-8x7b"));
  m.layers = 4;
  m.training.global_batch = 32;
  const Cluster c = test::fixture_cluster("dgx-h100-16");
  HybridPlan p = test::one_stage_plan(8, 4, 4, 8, 1, 8);
  p.model = m.name;
  p.cluster = c.name;
  p.overlap_moe_expert_parallel_comm = true;
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("hetsim_a2a_plan_" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(file) << hybrid_plan_to_yaml(p);
  const HybridPlan back = load_hybrid_plan(file, m, c);
  std::filesystem::remove(file);
  EXPECT_TRUE(back.overlap_moe_expert_parallel_comm);
  EXPECT_NE(back.shape().find("expert all-to-all overlapped"), std::string::npos) << back.shape();
  // The zero-bubble schedule splits the backward it would pair; without ep > 1 there is nothing to hide.
  HybridPlan zb = p;
  zb.schedule = PipelineSchedule::kZeroBubble;
  ASSERT_EQ(check_hybrid_plan(zb, m, c).size(), 1u);
  EXPECT_EQ(check_hybrid_plan(zb, m, c)[0].field, "overlap_moe_expert_parallel_comm");
  // Megatron-Core refuses it with full recomputation, and over pipeline stages without interleaving
  // (a stage's paired backward would be the one its next stage runs in the same step): hetsim
  // simulates such a file as written, and the Megatron export says why it has none.
  EXPECT_FALSE(megatron_args(p, m, c).args.empty()) << megatron_args(p, m, c).why_not;
  HybridPlan full = p;
  full.recompute = RecomputeMode::kFull;
  EXPECT_EQ(check_hybrid_plan(full, m, c).size(), 0u);
  EXPECT_NE(megatron_args(full, m, c).why_not.find("full recomputation"), std::string::npos);
  HybridPlan deep = p;
  deep.pipelines[0].stages = {deep.pipelines[0].stages[0], deep.pipelines[0].stages[0]};
  deep.pipelines[0].stages[0].chunks = {{0, 1}};
  deep.pipelines[0].stages[1].chunks = {{2, 3}};
  for (int g = 0; g < 8; ++g) deep.pipelines[0].stages[1].devices[g] = 8 + g;
  EXPECT_EQ(check_hybrid_plan(deep, m, c).size(), 0u);
  EXPECT_NE(megatron_args(deep, m, c).why_not.find("interleaved"), std::string::npos);
  deep.overlap_moe_expert_parallel_comm = false;
  EXPECT_TRUE(megatron_args(deep, m, c).why_not.empty()) << megatron_args(deep, m, c).why_not;
  HybridPlan dense = p;
  dense.pipelines[0].stages[0].ep = 1;
  ASSERT_EQ(check_hybrid_plan(dense, m, c).size(), 1u);
  EXPECT_NE(check_hybrid_plan(dense, m, c)[0].message.find("ep > 1"), std::string::npos);
}

TEST(CombinedOneFOneB, TheClosedFormFollowsThePairsAsTheyRun) {
  // Each part's all-to-all hides only under the part of the other pass written beside it (the
  // emitter's order, Megatron-Core's), not under the whole pass: with all-to-alls across two nodes'
  // NICs, longer than some parts, the estimate of a combined 1F1B plan follows its simulation as
  // closely as the plain plan's does. The gradients are reduced after the backward here: reduced
  // under it, they share the NICs with the expert all-to-alls, which the closed form leaves out
  // (2026-12-05, with Megatron-Core's order: estimate -1.5 % plain, -7.7 % combined; +0.7 / -4.9
  // % as here).
  ModelSpec m = load_model(test::shipped("workloads", "qwen3-30b-a3b"));
  m.layers = 4;
  m.seq_len = 4096;
  m.training.global_batch = 128;
  const Cluster c = test::fixture_cluster("dgx-h100-16");
  double error[2] = {0, 0};
  for (const bool combined : {false, true}) {
    HybridPlan p = test::one_stage_plan(16, 4, 8, 16, 1, 16);
    p.gradient_sync = GradientSync::kZero1;
    p.grad_sync_overlap = false;
    p.overlap_moe_expert_parallel_comm = combined;
    ASSERT_EQ(check_hybrid_plan(p, m, c).size(), 0u) << check_hybrid_plan(p, m, c)[0].message;
    HybridPlanner planner(m, c, CostModel{}, SimOptions{});
    const Evaluation ev = planner.evaluate(p, "ep16");
    ASSERT_TRUE(ev.report.feasible) << ev.report.infeasible_reason;
    const double estimate = planner.estimate(p).time_s;
    error[combined] = estimate / ev.report.iteration_time_s - 1;
  }
  EXPECT_LT(std::abs(error[1]), std::abs(error[0]) + 0.05) << error[0] << " " << error[1];
}

}  // namespace
}  // namespace hetsim
