// File: tests/planner/hybrid/skip_connections_test.cpp
// A U-Net's skip connections through a pipeline: each goes straight from the stage that writes it
// to the stage that reads it (with its gradient back), and none is sent from a GPU to itself when
// an interleaved stage holds both ends.
#include <gtest/gtest.h>

#include <map>

#include "planner/hybrid/hybrid_planner.hpp"
#include "sim/executor.hpp"
#include "test_support.hpp"

namespace hetsim {
namespace {

ModelSpec unet() {
  ModelSpec m = load_model(test::shipped("workloads", "unet-470m"));
  m.training.global_batch = 256;
  return m;
}

// The bytes the sends of micro-batch 0 move, by boundary ("act.vs0to2", "grad.vs2to0", ...).
std::map<std::string, double> first_micro_batch_sends(const Program& program) {
  std::map<std::string, double> bytes;
  for (const Task& t : program.tasks) {
    if (const auto* s = std::get_if<SendTask>(&t.body)) {
      const size_t at = t.label.find(".mb0.");
      if (at != std::string::npos) bytes[t.label.substr(at + 5, t.label.find(".w") - at - 5)] += s->size_bytes;
    }
  }
  return bytes;
}

TEST(SkipConnections, SkipConnectionsGoStraightToTheStageThatReadsThem) {
  // Alpa's 470M U-Net over 3 stages of one V100: embedding + layers 0-3 | 4-7 | 8-10 + head.
  // Stage 0 -> stage 2 carries the skips read by layers 8-10 (workloads/unet_graph: 2 -> 8
  // 20,971,520 bytes at 64 samples in fp32, 1 -> 9 41,943,040, 0 -> 10 83,886,080) and the time
  // embedding each of them reads (3 x 327,680): 147,783,680.
  const ModelSpec m = unet();
  const Cluster c = test::shipped_cluster("p3-8xlarge-5");
  HybridPlan plan;
  plan.micro_batch = 64;
  plan.recompute = RecomputeMode::kFull;
  plan.resharding.method = ReshardMethod::kBroadcast;
  PipelinePlan pl;
  pl.micro_batches = 4;
  pl.stages = {{{0}, 1, {{0, 3}}}, {{4}, 1, {{4, 7}}}, {{8}, 1, {{8, 10}}}};
  plan.pipelines = {pl};
  ASSERT_TRUE(check_hybrid_plan(plan, m, c).empty());
  PipelineProgramBuilder builder(m, c, CostModel{});
  const PipelineProgram p = builder.build(plan);
  std::map<std::string, double> bytes = first_micro_batch_sends(p.program);
  EXPECT_DOUBLE_EQ(bytes["act.vs0to2"], 147783680.0);
  EXPECT_DOUBLE_EQ(bytes["grad.vs2to0"], 147783680.0);  // their gradients come straight back
  EXPECT_GT(bytes["act.vs0to1"], 0);
  EXPECT_GT(bytes["act.vs1to2"], 0);
  EXPECT_EQ(bytes.count("act.vs1to0"), 0u);
  EXPECT_GT(simulate(p.program, c).iteration_time_s, 0);
}

TEST(SkipConnections, InterleavedSkipConnectionsIntoAChunkOfTheSameStageStayOnItsGpus) {
  // The 470M U-Net interleaved over 2 stages x 2 chunks: embedding + layers 0-2 | 3-5 | 6-8 |
  // 9-10 + head as virtual stages 0-3, stage 0 (GPU 0) holding 0 and 2. Layer 2's skip to layer 8
  // and the time embedding that layers 6-8 read go from virtual stage 0 to 2: on GPU 0 already,
  // nothing to send (they were sent from GPU 0 to itself, a malformed program); the skips of
  // layers 0-1 to 9-10 still cross to stage 1, and their gradients come back.
  const ModelSpec m = unet();
  const Cluster c = test::shipped_cluster("p3-8xlarge-5");
  HybridPlan plan;
  plan.micro_batch = 64;
  plan.schedule = PipelineSchedule::kInterleaved;
  plan.recompute = RecomputeMode::kFull;
  PipelinePlan pl;
  pl.micro_batches = 4;
  pl.stages = {{{0}, 1, {{0, 2}, {6, 8}}}, {{4}, 1, {{3, 5}, {9, 10}}}};
  plan.pipelines = {pl};
  ASSERT_TRUE(check_hybrid_plan(plan, m, c).empty());
  for (const ReshardMethod method : {ReshardMethod::kLocalAllGather, ReshardMethod::kBroadcast}) {
    SCOPED_TRACE(static_cast<int>(method));
    plan.resharding.method = method;
    PipelineProgramBuilder builder(m, c, CostModel{});
    const PipelineProgram p = builder.build(plan);
    ASSERT_EQ(validate(p.program), "");  // (it refuses a send from a GPU to itself)
    std::map<std::string, double> bytes = first_micro_batch_sends(p.program);
    EXPECT_EQ(bytes.count("act.vs0to2"), 0u);
    EXPECT_EQ(bytes.count("grad.vs2to0"), 0u);
    EXPECT_GT(bytes["act.vs0to1"], 0);
    EXPECT_GT(bytes["act.vs0to3"], 0);
    EXPECT_GT(bytes["grad.vs3to0"], 0);
    EXPECT_GT(simulate(p.program, c).iteration_time_s, 0);
  }
}

}  // namespace
}  // namespace hetsim
