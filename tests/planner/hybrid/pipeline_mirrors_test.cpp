// File: tests/planner/hybrid/pipeline_mirrors_test.cpp
// Data-parallel pipelines that nothing tells apart written once and mirrored: the same times as
// every pipeline written out, in far fewer tasks; pipelines told apart are written each.
#include "planner/hybrid/pipeline_mirrors.hpp"

#include <gtest/gtest.h>

#include "planner/hybrid/hybrid_planner.hpp"
#include "planner/hybrid/pipeline_builder.hpp"
#include "sim/executor.hpp"
#include "test_support.hpp"

namespace hetsim {
namespace {

// Megatron's layout: TP x PP x DP, stage s of pipeline d on TP group s x dp + d (a node of 8 GPUs
// holds 8 / tp of them), layers split evenly.
HybridPlan megatron(const ModelSpec& m, int tp, int pp, int dp, long micro_batches) {
  HybridPlan p;
  p.micro_batch = 1;
  const int layers = static_cast<int>(m.layers);
  const auto first_layer = [&](int s) { return s * (layers / pp) + std::min(s, layers % pp); };
  for (int d = 0; d < dp; ++d) {
    PipelinePlan pl;
    pl.micro_batches = micro_batches;
    for (int s = 0; s < pp; ++s) {
      StagePlan st;
      st.tp = tp;
      for (int k = 0; k < tp; ++k) st.devices.push_back((s * dp + d) * tp + k);
      st.chunks = {{first_layer(s), first_layer(s + 1) - 1}};
      pl.stages.push_back(st);
    }
    p.pipelines.push_back(pl);
  }
  return p;
}

struct Both {
  PipelineProgram mirrored, written;
  SimResult a, b;
};

Both build_both(const ModelSpec& m, const Cluster& c, const HybridPlan& plan) {
  Both out;
  PipelineProgramBuilder builder(m, c, CostModel{});
  out.mirrored = builder.build(plan);
  builder.set_mirror_pipelines(false);
  out.written = builder.build(plan);
  out.a = simulate(out.mirrored.program, c);
  out.b = simulate(out.written.program, c);
  return out;
}

void expect_same_run(const Both& x, const Cluster& c) {
  EXPECT_FALSE(x.a.mirrors_diverged);
  EXPECT_FALSE(x.b.mirrors_diverged);
  EXPECT_DOUBLE_EQ(x.a.iteration_time_s, x.b.iteration_time_s);
  EXPECT_EQ(x.mirrored.feasible, x.written.feasible);
  ASSERT_EQ(x.mirrored.peak_memory_bytes.size(), x.written.peak_memory_bytes.size());
  for (int d = 0; d < c.gpu_count(); ++d) {
    EXPECT_DOUBLE_EQ(x.mirrored.peak_memory_bytes[d], x.written.peak_memory_bytes[d]) << d;
    EXPECT_NEAR(x.a.devices[d].compute_s, x.b.devices[d].compute_s, 1e-12 * x.a.iteration_time_s) << d;
    EXPECT_NEAR(x.a.devices[d].comm_s, x.b.devices[d].comm_s, 1e-9 * x.a.iteration_time_s) << d;
    EXPECT_DOUBLE_EQ(x.a.devices[d].peak_memory_bytes, x.b.devices[d].peak_memory_bytes) << d;
  }
  for (int k = 0; k < kCostSources; ++k) {
    EXPECT_NEAR(x.mirrored.program.compute_source_s[k], x.written.program.compute_source_s[k],
                1e-12 * x.written.program.compute_source_s[k] + 1e-15);
  }
}

TEST(PipelineMirrors, AlikePipelinesAreWrittenOnceWithTheTimesOfEveryOneWritten) {
  // GPT-3 1.3B as TP 2 x PP 2 x DP 4 on 16 A100s of two nodes: pipeline sends cross the nodes, the
  // gradients are all-reduced across the four pipelines, the embedding tied between the stages.
  const ModelSpec m = load_model(test::shipped("workloads", "gpt3-1.3b"));
  const Cluster c = test::shipped_cluster("a100-8x8");
  for (const bool zero1 : {false, true}) {
    SCOPED_TRACE(zero1 ? "zero-1, sequence parallel, parameter gathers overlapped" : "all-reduce");
    HybridPlan plan = megatron(m, 2, 2, 4, 6);
    if (zero1) {
      plan.gradient_sync = GradientSync::kZero1;
      plan.sequence_parallel = true;
      plan.overlap_param_gather = true;
    }
    const Both x = build_both(m, c, plan);
    expect_same_run(x, c);
    EXPECT_LT(x.mirrored.program.tasks.size() * 2, x.written.program.tasks.size());
  }
}

TEST(PipelineMirrors, PipelinesToldApartAreWrittenEach) {
  const ModelSpec m = load_model(test::shipped("workloads", "gpt3-1.3b"));
  const Cluster c = test::shipped_cluster("a100-8x8");
  const HybridPlan plan = megatron(m, 2, 2, 4, 6);
  const auto mirrors_of = [&](const HybridPlan& p, const Cluster& cl) {
    PipelineProgramBuilder builder(m, cl, CostModel{});
    const size_t mirrored = builder.build(p).program.tasks.size();
    builder.set_mirror_pipelines(false);
    return std::pair{mirrored, builder.build(p).program.tasks.size()};
  };
  const auto [all_mirrored, all_written] = mirrors_of(plan, c);
  EXPECT_LT(all_mirrored * 2, all_written);
  HybridPlan uneven = plan;
  uneven.pipelines[3].micro_batches = 7;  // another share of the batch
  const auto [uneven_mirrored, uneven_written] = mirrors_of(uneven, c);
  EXPECT_LT(uneven_mirrored, uneven_written);
  EXPECT_GT(uneven_mirrored, all_mirrored);  // pipeline 3 written out beside the one the others mirror
  // Under ZeRO-3 the weight gathers run in lockstep across pipelines: none is mirrored.
  HybridPlan zero3 = plan;
  zero3.gradient_sync = GradientSync::kZero3;
  const auto [z_mirrored, z_written] = mirrors_of(zero3, c);
  EXPECT_EQ(z_mirrored, z_written);
  // Nor a pipeline whose TP group spans two nodes where the others' do not (its boundary tensors
  // are resharded another way), nor with senders balanced over the whole plan's NIC loads.
  HybridPlan straddle = plan;
  straddle.pipelines[3].stages[0].devices = {7, 56};
  const auto [s_mirrored, s_written] = mirrors_of(straddle, c);
  EXPECT_LT(s_mirrored, s_written);
  HybridPlan only_straddle = straddle;
  only_straddle.pipelines.resize(1);
  only_straddle.pipelines.push_back(straddle.pipelines[3]);
  const auto [o_mirrored, o_written] = mirrors_of(only_straddle, c);
  EXPECT_EQ(o_mirrored, o_written);
  HybridPlan by_nic = plan;
  by_nic.resharding.load_balance = LoadBalance::kNic;
  const auto [n_mirrored, n_written] = mirrors_of(by_nic, c);
  EXPECT_EQ(n_mirrored, n_written);
  // Nor over an oversubscribed network, where pipelines tend to part (and would be simulated twice).
  Cluster tapered = c;
  ASSERT_EQ(tapered.network.topology, NetTopology::kFatTree);
  tapered.network.oversubscription = 2;
  const auto [t_mirrored, t_written] = mirrors_of(plan, tapered);
  EXPECT_EQ(t_mirrored, t_written);
}

TEST(PipelineMirrors, ADegradedNodeUnderEveryPipelineKeepsThemAlike) {
  const ModelSpec m = load_model(test::shipped("workloads", "gpt3-1.3b"));
  Cluster c = test::shipped_cluster("a100-8x8");
  c.node_health.assign(static_cast<size_t>(c.node_count()), Degradation{});
  c.node_health[1].compute_slowdown = 1.3;  // node 1: the second stage of every pipeline (GPUs 8-15)
  const HybridPlan plan = megatron(m, 2, 2, 4, 6);
  const Both x = build_both(m, c, plan);
  expect_same_run(x, c);
  EXPECT_LT(x.mirrored.program.tasks.size() * 2, x.written.program.tasks.size());
}

TEST(PipelineMirrors, CopiesThatMeetLinksUnevenlyAreSimulatedWrittenOut) {
  // Pipeline 3's second stage moves to node 2: the gradients' ring of the second stages then
  // crosses from node 1 to node 2 on the NIC of GPU 12, whose pipeline (2) sends its backward
  // activations on it too. Pipelines 0-2 are still alike by their stages, but pipeline 2's
  // transfers run slower than 0's and 1's: the copies do not keep one pace, and the simulator runs
  // them written out, with the times of the program the planner writes without mirrors.
  const ModelSpec m = load_model(test::shipped("workloads", "gpt3-1.3b"));
  const Cluster c = test::shipped_cluster("a100-8x8");
  HybridPlan split = megatron(m, 2, 2, 4, 6);
  split.pipelines[3].stages[1].devices = {16, 17};
  const Both x = build_both(m, c, split);
  EXPECT_LT(x.mirrored.program.tasks.size(), x.written.program.tasks.size());
  EXPECT_TRUE(x.a.mirrors_diverged);
  EXPECT_FALSE(x.b.mirrors_diverged);
  EXPECT_NEAR(x.a.iteration_time_s, x.b.iteration_time_s, 1e-12 * x.b.iteration_time_s);
  for (int d = 0; d < c.gpu_count(); ++d) {
    EXPECT_NEAR(x.a.devices[d].compute_s, x.b.devices[d].compute_s, 1e-12 * x.b.iteration_time_s) << d;
    EXPECT_NEAR(x.a.devices[d].comm_s, x.b.devices[d].comm_s, 1e-12 * x.b.iteration_time_s) << d;
    EXPECT_DOUBLE_EQ(x.a.devices[d].peak_memory_bytes, x.b.devices[d].peak_memory_bytes) << d;
  }
  // Each mirrored task spans its copies: pipeline 2's slower send ends the task.
  ASSERT_EQ(x.a.tasks.size(), x.mirrored.program.tasks.size());
  // Through the planner: the same.
  HybridPlanner planner(m, c, CostModel{}, SimOptions{});
  const Evaluation e = planner.evaluate(split, "mirrors");
  EXPECT_NEAR(e.result.iteration_time_s, x.b.iteration_time_s, 1e-12 * x.b.iteration_time_s);
}

}  // namespace
}  // namespace hetsim
