// File: tests/planner/hybrid/activation_offload_test.cpp
// Transformer Engine's CPU offloading of activations (activation_offload_layers): the copy stream's
// schedule on hand cases, what it frees and costs on a stage's blocks, the plan rules Megatron-Core
// enforces, and the plan file field.
#include <gtest/gtest.h>
#include <algorithm>

#include "planner/hybrid/activation_offload.hpp"
#include "planner/hybrid/hybrid_planner.hpp"
#include "planner/hybrid/megatron_args.hpp"
#include "one_stage_plan.hpp"
#include "test_support.hpp"

namespace hetsim {
namespace {

// Four layers of 1 s forward and 2 s backward, the first `offloaded` copying `copy_s` seconds of bytes each
// way (1 byte/s).
std::vector<OffloadBlock> four_layers(int offloaded, double copy_s) {
  std::vector<OffloadBlock> b(4);
  for (int i = 0; i < 4; ++i) b[i] = {1.0, 2.0, i < offloaded ? copy_s : 0.0, true, i < offloaded};
  return b;
}

TEST(ActivationOffload, CopiesThatFitUnderTheComputeCostNothing) {
  // Layers 0 and 1 offloaded (two sets on the GPU): copy 0 runs [1, 1.5] under layer 1, copy 1 [2, 2.5]
  // under layer 2; layer 2 needs copy 0 done (1.5 <= 2), layer 3 copy 1 (2.5 <= 3). The backward from 4:
  // layer 3 [4, 6], layer 2 [6, 8]; layer 1 comes back [6, 6.5] once layer 3's backward has freed its set,
  // layer 0 [8, 8.5]: both before their backward.
  const OffloadStalls s = offload_stalls(four_layers(2, 0.5), 2, 1.0, 1.0);
  for (int i = 0; i < 4; ++i) {
    EXPECT_DOUBLE_EQ(s.fwd_wait_s[i], 0.0) << i;
    EXPECT_DOUBLE_EQ(s.bwd_wait_s[i], 0.0) << i;
  }
}

TEST(ActivationOffload, ASlowLinkStallsTheForwardAndTheBackwardAsTheWindowSays) {
  // Copies of 3 s: copy 0 [1, 4], copy 1 [4, 7]; layer 2 waits for copy 0 (starts at 4, not 2), layer 3
  // for copy 1 (7, not 5). Backward from 8: layer 3 [8, 10], layer 2 [10, 12]; layer 1 comes back [10, 13]
  // (after layer 3's backward), its backward waits 1 s [13, 15]; layer 0 [13, 16] (the stream's order),
  // its backward waits 1 s.
  const OffloadStalls s = offload_stalls(four_layers(2, 3.0), 2, 1.0, 1.0);
  const std::vector<double> fwd{0, 0, 2, 2}, bwd{1, 1, 0, 0};
  for (int i = 0; i < 4; ++i) {
    EXPECT_DOUBLE_EQ(s.fwd_wait_s[i], fwd[i]) << i;
    EXPECT_DOUBLE_EQ(s.bwd_wait_s[i], bwd[i]) << i;
  }
  // One set on the GPU (3 of 4 offloaded): every copy runs alone, as Transformer Engine warns.
  const OffloadStalls one = offload_stalls(four_layers(3, 0.5), 1, 1.0, 1.0);
  const std::vector<double> fwd1{0, 0.5, 0.5, 0.5}, bwd1{0.5, 0.5, 0.5, 0};
  for (int i = 0; i < 4; ++i) {
    EXPECT_DOUBLE_EQ(one.fwd_wait_s[i], fwd1[i]) << i;
    EXPECT_DOUBLE_EQ(one.bwd_wait_s[i], bwd1[i]) << i;
  }
}

// Llama 2 7B's blocks on one GPU, the first `offloaded` layers offloaded, over a host link of `rate` each way.
std::vector<BlockWork> llama_blocks(int offloaded, double rate) {
  const ModelSpec m = load_model(test::shipped("workloads", "llama2-7b"));
  Device d = load_device(test::shipped("kernels_profile/devices", "H100-SXM5-80GB"));
  d.host_link.to_host_Bps = d.host_link.from_host_Bps = rate;
  StageWorkKey key;
  key.samples = 1;
  key.offload_layers = offloaded;
  return stage_block_work(m, d, DType::kBf16, CostModel{}, key);
}

double total(const std::vector<BlockWork>& w, double (BlockWork::*f)() const) {
  double s = 0;
  for (const BlockWork& b : w) s += (b.*f)();
  return s;
}

TEST(ActivationOffload, OffloadedLayersKeepNothingOnTheGpuAndCostOnlyWhatTheLinkCannotHide) {
  const std::vector<BlockWork> none = llama_blocks(0, 450e9), fast = llama_blocks(16, 450e9), slow = llama_blocks(16, 5e9);
  ASSERT_EQ(none.size(), fast.size());
  double saved_none = 0, saved_fast = 0, offloaded = 0;
  for (size_t b = 0; b < none.size(); ++b) {
    saved_none += none[b].saved_bytes;
    saved_fast += fast[b].saved_bytes;
    offloaded += fast[b].offload_bytes;
  }
  // Llama 2 7B's 32 layers are alike: the 16 offloaded ones' activations leave the GPU, no window excess.
  EXPECT_GT(offloaded, 0);
  EXPECT_DOUBLE_EQ(fast[1].offload_bytes, none[1].saved_bytes);
  EXPECT_EQ(fast[1].saved_bytes, 0);
  EXPECT_DOUBLE_EQ(fast[17].saved_bytes, none[17].saved_bytes);
  EXPECT_NEAR(saved_fast, saved_none - offloaded, 1e-6 * saved_none);
  EXPECT_NEAR(offloaded, 16.0 * none[1].saved_bytes, 1e-6 * offloaded);
  // A link of 450 GB/s hides the copies under 16 layers' compute; one of 5 GB/s does not.
  EXPECT_DOUBLE_EQ(total(fast, &BlockWork::fwd_s), total(none, &BlockWork::fwd_s));
  EXPECT_DOUBLE_EQ(total(fast, &BlockWork::bwd_s), total(none, &BlockWork::bwd_s));
  EXPECT_GT(total(slow, &BlockWork::fwd_s), total(none, &BlockWork::fwd_s));
  EXPECT_GT(total(slow, &BlockWork::bwd_s), total(none, &BlockWork::bwd_s));
}

TEST(ActivationOffload, PlansFollowMegatronCoresRulesAndPlanFilesCarryIt) {
  const ModelSpec m = load_model(test::shipped("workloads", "llama2-7b"));
  const Cluster c = test::h100_nodes(1);
  HybridPlan p = test::one_stage_plan(8, static_cast<int>(m.layers), m.training.global_batch / 8, 8);
  p.activation_offload_layers = 8;
  p.gradient_sync = GradientSync::kZero1;
  EXPECT_TRUE(check_hybrid_plan(p, m, c).empty());
  EXPECT_NE(p.shape().find("activations of 8 layers offloaded"), std::string::npos) << p.shape();
  EXPECT_NE(megatron_args(p, m, c).args.find("--cpu-offloading-num-layers 8"), std::string::npos) << megatron_args(p, m, c).args;
  // The iteration costs what the link cannot hide, and holds less at its peak.
  HybridPlanner planner(m, c, CostModel{}, SimOptions{});
  HybridPlan kept = p;
  kept.activation_offload_layers = 0;
  const HybridEstimate with = planner.estimate(p), without = planner.estimate(kept);
  EXPECT_LT(with.worst_memory_ratio, without.worst_memory_ratio);
  EXPECT_GE(with.time_s, without.time_s);
  // Over a link of 1 GB/s the copies stall the compute stream: the program says where (".host_wait" tasks).
  Cluster slow = c;
  slow.node_types.front().gpu.host_link.to_host_Bps = slow.node_types.front().gpu.host_link.from_host_Bps = 1e9;
  index_gpus(slow);
  HybridPlanner stalled(m, slow, CostModel{}, SimOptions{});
  const Evaluation ev = stalled.evaluate(p, "offload");
  ASSERT_TRUE(ev.report.feasible) << ev.report.infeasible_reason;
  EXPECT_TRUE(std::any_of(ev.program.tasks.begin(), ev.program.tasks.end(),
                          [](const Task& t) { return t.label.find(".host_wait") != std::string::npos; }));
  EXPECT_GT(stalled.estimate(p).time_s, with.time_s);
  EXPECT_GT(ev.result.iteration_time_s, planner.evaluate(p, "offload").result.iteration_time_s);
  // Refused as Megatron-Core refuses it: every layer, beside recompute, with pipeline stages.
  HybridPlan all = p;
  all.activation_offload_layers = static_cast<int>(m.layers);
  ASSERT_EQ(check_hybrid_plan(all, m, c).size(), 1u);
  EXPECT_EQ(check_hybrid_plan(all, m, c)[0].field, "activation_offload_layers");
  HybridPlan recomputed = p;
  recomputed.recompute = RecomputeMode::kSelective;
  ASSERT_EQ(check_hybrid_plan(recomputed, m, c).size(), 1u);
  EXPECT_NE(check_hybrid_plan(recomputed, m, c)[0].message.find("refuses the two together"), std::string::npos);
  HybridPlan staged = p;
  staged.pipelines[0].stages[0].chunks = {{0, 15}};
  StagePlan second = staged.pipelines[0].stages[0];
  second.chunks = {{16, static_cast<int>(m.layers) - 1}};
  staged.pipelines[0].stages[0].devices = {0, 1, 2, 3};
  second.devices = {4, 5, 6, 7};
  staged.pipelines[0].stages.push_back(second);
  bool said = false;
  for (const PlanProblem& problem : check_hybrid_plan(staged, m, c)) {
    said = said || problem.message.find("no CPU offloading with pipeline parallelism") != std::string::npos;
  }
  EXPECT_TRUE(said);
  // The plan file field, and a file asking for it beside recompute.
  EXPECT_EQ(test::read_edited_plan(p, m, c).plan->activation_offload_layers, 8);
  const test::EditedPlanRead beside = test::read_edited_plan(p, m, c, "recompute: none", "recompute: full");
  EXPECT_FALSE(beside.plan) << "offloading beside full recompute accepted";
  EXPECT_NE(beside.error.find("activation_offload_layers"), std::string::npos) << beside.error;
}


TEST(ActivationOffload, WhereNothingFitsWithoutItThePlannerOffloadsTheFewestLayersThatFit) {
  // Llama 2 13B with sequences of 16384 tokens on one GB200 tray (4 GPUs): without pipeline stages the
  // activations do not fit without recompute; offloading the first layers over NVLink-C2C does, and the
  // planner weighs it against recomputing. Each offloading plan it keeps offloads the fewest layers that fit.
  ModelSpec m = load_model(test::shipped("workloads", "llama2-13b"));
  m.seq_len = 65536;
  Cluster c = test::shipped_cluster("gb200-nvl72-16");
  c.node_types.front().count = 1;
  index_gpus(c);
  HybridPlanner planner(m, c, CostModel{}, SimOptions{});
  HybridOptions o;
  o.context_parallel = false;
  const HybridSearch s = planner.search(HybridFlavour::kHetsim, o);
  int offloading = 0;
  for (const HybridPlan& p : s.leading) {
    if (p.activation_offload_layers == 0) continue;
    ++offloading;
    EXPECT_TRUE(check_hybrid_plan(p, m, c).empty()) << p.shape();
    EXPECT_TRUE(planner.estimate(p).fits) << p.shape();
    HybridPlan fewer = p;
    fewer.activation_offload_layers -= 1;
    if (fewer.activation_offload_layers > 0) {
      EXPECT_FALSE(planner.estimate(fewer).fits) << p.shape();
    }
  }
  ASSERT_GT(offloading, 0);
  // The Grace CPU's memory bounds what its GPUs offload (device files' host_link.memory): with 1 GiB each
  // the same plan no longer fits, and says why.
  const auto offloads = std::find_if(s.leading.begin(), s.leading.end(), [](const HybridPlan& p) { return p.activation_offload_layers > 0; });
  Cluster small = c;
  small.node_types.front().gpu.host_link.memory_bytes = 1 << 30;
  index_gpus(small);
  HybridPlanner tight(m, small, CostModel{}, SimOptions{});
  const HybridEstimate e = tight.estimate(*offloads);
  EXPECT_FALSE(e.fits);
  EXPECT_NE(e.reason.find("to host memory, which holds 1 GiB"), std::string::npos) << e.reason;
  const Evaluation ev = tight.evaluate(*offloads, "offload");
  EXPECT_FALSE(ev.report.feasible);
  EXPECT_NE(ev.report.infeasible_reason.find("to host memory"), std::string::npos) << ev.report.infeasible_reason;
}

}  // namespace
}  // namespace hetsim
