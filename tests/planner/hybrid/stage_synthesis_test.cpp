// File: tests/planner/hybrid/stage_synthesis_test.cpp
// HAP inside a stage: the A* + LP synthesis on a TP group finds Megatron's program where
// NVLink is fast, finds a different one when the group's collectives are made expensive, and a
// plan with synthesised stage programs simulates exactly like Megatron's when they agree.
#include "planner/hybrid/stage_synthesis.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "planner/hybrid/pipeline_builder.hpp"
#include "sim/executor.hpp"
#include "test_support.hpp"

namespace hetsim {
namespace {

class StageSynthesisTest : public ::testing::Test {
 protected:
  ModelSpec model_ = load_model(test::shipped("workloads", "gpt3-175b"));
  Cluster cluster_ = load_cluster(test::shipped("topologies", "selene-64"));
  const Device& a100() const { return cluster_.node_types[0].gpu; }
};

bool has(const std::vector<std::string>& rules, const std::string& rule) {
  return std::find(rules.begin(), rules.end(), rule) != rules.end();
}

TEST_F(StageSynthesisTest, FindsMegatronOnNvlink) {
  PipelineProgramBuilder b(model_, cluster_, CostModel{});
  HybridPlan plan;
  b.prepare(plan);
  const LayerSynthesis& s = b.synthesis(0, StageWorkKey{1, 8});
  ASSERT_FALSE(s.rules.empty());
  EXPECT_TRUE(s.megatron) << ::testing::PrintToString(s.rules);
  EXPECT_TRUE(has(s.rules, "layer0.qkv: column"));
  EXPECT_TRUE(has(s.rules, "layer0.attn_out: row"));
  EXPECT_TRUE(has(s.rules, "layer0.mlp_up: column"));
  EXPECT_TRUE(has(s.rules, "layer0.mlp_down: row"));
  EXPECT_NEAR(s.cost_s, s.megatron_cost_s, 1e-12 * s.cost_s);
  EXPECT_GT(s.search.expanded, 0);
  ASSERT_EQ(s.ratios.size(), 8u);
  for (double r : s.ratios) EXPECT_NEAR(r, 1.0 / 8, 1e-12);  // one GPU type: equal shares (12 heads each)
  // Megatron's program as placements: two all-reduces forward (after each row-split layer) and
  // two backward (the input gradients of the column-split layers), one hidden tensor each.
  const double hidden = 2048.0 * 12288 * 2;
  TpBytes fwd, bwd;
  for (const OpPlacement& p : s.program.ops) {
    fwd += p.before_fwd;
    fwd += p.after_fwd;
    bwd += p.before_bwd;
    bwd += p.after_bwd;
    bwd += p.bwd;
  }
  EXPECT_DOUBLE_EQ(fwd.all_reduce, 2 * hidden);
  EXPECT_DOUBLE_EQ(bwd.all_reduce, 2 * hidden);
  EXPECT_EQ(fwd.count() + bwd.count(), 2);
}

TEST_F(StageSynthesisTest, SlowGroupLinksChangeTheProgram) {
  // Collectives a million times slower than NVLink: communicating a layer's activations costs
  // more than computing the whole layer on every rank, so the search replicates everything.
  const CollectiveCost slow{1e-3, 1e-6};
  const GroupCollectives comm{slow, slow, slow, slow};
  const LayerSynthesis s = synthesise_layer(model_, a100(), DType::kFp16, CostModel{}, 1, 8, comm);
  ASSERT_FALSE(s.rules.empty());
  EXPECT_FALSE(s.megatron);
  EXPECT_LT(s.cost_s, 0.5 * s.megatron_cost_s);
  EXPECT_FALSE(has(s.rules, "layer0.qkv: column"));
  for (const OpPlacement& p : s.program.ops) {
    EXPECT_FALSE(p.before_fwd.any() || p.after_fwd.any() || p.bwd.any());
  }
  // Its blocks: no TP collectives, and each rank computes the whole layer (8x Megatron's share).
  StageWorkKey key{1, 8};
  const std::vector<BlockWork> synth = stage_block_work(model_, a100(), DType::kFp16, CostModel{}, key, s.program);
  const std::vector<BlockWork> megatron = stage_block_work(model_, a100(), DType::kFp16, CostModel{}, key);
  for (const WorkPart& part : synth[1].parts) EXPECT_FALSE(part.tp_fwd.any() || part.tp_bwd.any());
  EXPECT_GT(synth[1].fwd_s(), 5 * megatron[1].fwd_s());
  EXPECT_NEAR(synth[1].params, 8 * megatron[1].params, 0.01 * synth[1].params);
}

TEST_F(StageSynthesisTest, SynthesisedPlanSimulatesLikeMegatronWhenTheyAgree) {
  ModelSpec m = model_;
  m.training.global_batch = 8;
  PipelineProgramBuilder b(m, cluster_, CostModel{});
  HybridPlan plan;
  plan.recompute = RecomputeMode::kFull;
  for (int s = 0; s < 8; ++s) {
    StagePlan st;
    st.tp = 8;
    for (int k = 0; k < 8; ++k) st.devices.push_back(8 * s + k);
    st.chunks = {{12 * s, 12 * s + 11}};
    if (plan.pipelines.empty()) plan.pipelines.push_back({8, {}});
    plan.pipelines[0].stages.push_back(st);
  }
  const PipelineProgram megatron = b.build(plan);
  plan.stage_program = StageProgram::kSynthesised;
  const PipelineProgram synthesised = b.build(plan);
  ASSERT_TRUE(megatron.feasible && synthesised.feasible);
  EXPECT_EQ(megatron.program.tasks.size(), synthesised.program.tasks.size());
  const double a = simulate(megatron.program, cluster_).iteration_time_s;
  const double c = simulate(synthesised.program, cluster_).iteration_time_s;
  EXPECT_NEAR(a, c, 1e-9 * a);
}

}  // namespace
}  // namespace hetsim
