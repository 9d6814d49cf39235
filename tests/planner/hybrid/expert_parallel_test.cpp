// File: tests/planner/hybrid/expert_parallel_test.cpp
// Expert parallelism (stage fields ep, expert_tp) against closed forms: the dispatch and combine
// bytes, the expert weights each GPU holds, the imbalance, the groups that synchronise expert
// gradients; and DeepSeek-V3-like plans whose memory fits at EP 64 and not at EP 8.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "planner/hybrid/hybrid_plan_file.hpp"
#include "planner/hybrid/hybrid_planner.hpp"
#include "planner/hybrid/pipeline_builder.hpp"
#include "planner/hybrid/stage_work.hpp"
#include "sim/collective.hpp"
#include "sim/schedule.hpp"
#include "one_stage_plan.hpp"
#include "test_support.hpp"

namespace hetsim {
namespace {

using test::h100_nodes;

std::vector<BlockWork> moe_work(const ModelSpec& m, long samples, int tp, int ep, int etp) {
  const Device h100 = load_device(test::shipped("kernels_profile/devices", "H100-SXM5-80GB"));
  StageWorkKey key{samples, tp, tp > 1, RecomputeMode::kNone, StageProgram::kMegatron, true, 1, CpComm::kRing, ep, etp};
  return stage_block_work(m, h100, DType::kBf16, CostModel{}, key);
}

TpBytes sum(const std::vector<WorkPart>& parts, TpBytes WorkPart::*field) {
  TpBytes t;
  for (const WorkPart& p : parts) t += p.*field;
  return t;
}

TEST(ExpertParallel, DispatchSendsEachTokenTopKTimesExpertsMinusOneOverExperts) {
  // Mixtral 8x7B, E = 8 experts over ep = 8 GPUs, perfect balance: each of a GPU's T tokens goes to
  // top_k = 2 experts, 7/8 of them elsewhere: T x 2 x 7/8 hidden vectors (4096 x 2 bytes) out in the
  // dispatch, as many back in the combine, and the same again in the backward. The all-to-all's
  // size is the GPU's whole buffer (T x 2 copies, nccl-tests' convention); the simulator's schedule
  // keeps 1/8 of it on the GPU and sends the rest.
  ModelSpec m = load_model(test::shipped("workloads", "mixtral-8x7b"));
  m.seq_len = 4096;
  const double T = 4096, h = 4096 * 2;
  const std::vector<BlockWork> w = moe_work(m, 1, 1, 8, 1);
  const BlockWork& layer = w[1];
  const Cluster c = test::fixture_cluster("dgx-h100-16");
  const auto sent_by_gpu0 = [&](double size, int ep) {
    std::vector<int> group;
    for (int g = 0; g < ep; ++g) group.push_back(g);
    double bytes = 0;
    for (const Schedule& sch : collective_schedules(collective(CollectiveOp::kAllToAll, group, size), Algorithm::kPairwise, c)) {
      for (const Flow& f : merged_flows(sch)) bytes += f.src == 0 && f.dst != 0 ? f.bytes : 0;
    }
    return bytes;
  };
  const double dispatch = sum(layer.parts, &WorkPart::ep_fwd).all_to_all;  // dispatch and combine
  EXPECT_DOUBLE_EQ(dispatch, 2 * T * 2 * h);
  EXPECT_DOUBLE_EQ(sum(layer.parts, &WorkPart::ep_bwd).all_to_all, dispatch);
  EXPECT_NEAR(sent_by_gpu0(dispatch / 2, 8), T * 2 * 7.0 / 8 * h, 1e-9 * dispatch);
  // ep = 4 over the same experts: 3/4 leave the GPU.
  const double ep4 = sum(moe_work(m, 1, 1, 4, 1)[1].parts, &WorkPart::ep_fwd).all_to_all;
  EXPECT_NEAR(sent_by_gpu0(ep4 / 2, 4), T * 2 * 3.0 / 4 * h, 1e-9 * ep4);
  // Router imbalance 1.5: the busiest GPU moves and computes 1.5 x the mean.
  ModelSpec skew = m;
  skew.moe->router_imbalance = 1.5;
  const std::vector<BlockWork> skewed = moe_work(skew, 1, 1, 8, 1);
  const BlockWork& busy = skewed[1];
  EXPECT_DOUBLE_EQ(sum(busy.parts, &WorkPart::ep_fwd).all_to_all, 1.5 * dispatch);
  // The expert ops' forward and backward FLOPs (the graph's, for the GPU's T tokens): half again.
  double expert_flops = 0;
  for (const Op& op : build_op_graph(m, 1, DType::kBf16).ops) {
    if (op.expert && op.layer == 0) expert_flops += op.fwd_flops + op.bwd_flops;
  }
  EXPECT_GT(expert_flops, 3 * (2 + 4) * T * 2 * 4096.0 * 14336);  // the three GEMMs and the activation
  EXPECT_NEAR(busy.model_flops - layer.model_flops, 0.5 * expert_flops, 1e-9 * layer.model_flops);
}

TEST(ExpertParallel, EachGpuHoldsExpertsOverEpTimesExpertTpOfTheWeights) {
  // Expert weights per GPU = experts / ep x (3 x 4096 x 14336) / expert_tp (SwiGLU: gate, up, down).
  ModelSpec m = load_model(test::shipped("workloads", "mixtral-8x7b"));
  m.seq_len = 4096;
  const double expert = 3.0 * 4096 * 14336;
  for (auto [ep, etp] : {std::pair{1, 1}, std::pair{8, 1}, std::pair{4, 2}, std::pair{2, 4}}) {
    SCOPED_TRACE("ep " + std::to_string(ep) + " expert_tp " + std::to_string(etp));
    const std::vector<BlockWork> w = moe_work(m, 1, 1, ep, etp);
    const BlockWork& layer = w[1];
    EXPECT_DOUBLE_EQ(layer.expert_params, 8.0 / ep * expert / etp);
    // Expert TP gathers the received rows (T x 2 token copies, 4096 x 2 bytes each) etp ways.
    EXPECT_DOUBLE_EQ(sum(layer.parts, &WorkPart::etp_fwd).all_gather, etp > 1 ? 4096.0 * 2 * 4096 * 2 * etp : 0);
  }
}

TEST(ExpertParallel, ExpertGradientsSyncOverTheExpertShardsCopiesOnly) {
  // Mixtral (4 layers) on 16 H100: one stage of 16 GPUs, tp 1, ep 8: two expert groups of 8 GPUs,
  // each holding every expert once. Dense gradients reduce over all 16 copies; each expert shard's
  // over its 2 copies (GPU k and k + 8). The groups of 8 copies that an expert group spans run in
  // lockstep, so the all-to-alls join 8 GPUs, and the plan simulates.
  ModelSpec m = load_model(test::shipped("workloads", "mixtral-8x7b"));
  m.layers = 4;
  m.seq_len = 4096;
  m.training.global_batch = 64;
  const Cluster c = h100_nodes(2);
  HybridPlan p = test::one_stage_plan(16, 4, 4, 16, 1, 8);
  p.gradient_sync = GradientSync::kZero1;
  ASSERT_EQ(check_hybrid_plan(p, m, c).size(), 0u);
  HybridPlanner planner(m, c, CostModel{}, SimOptions{});
  const Evaluation ev = planner.evaluate(p, "ep8");
  ASSERT_TRUE(ev.report.feasible) << ev.report.infeasible_reason;
  int expert_syncs = 0, dense_syncs = 0, all_to_alls = 0;
  for (const Task& t : ev.program.tasks) {
    const auto* coll = std::get_if<CollectiveTask>(&t.body);
    if (coll == nullptr) continue;
    if (t.label.rfind("expert_grad_reducescatter", 0) == 0) {
      ++expert_syncs;
      ASSERT_EQ(coll->group.size(), 2u) << t.label;
      EXPECT_EQ(coll->group[1] - coll->group[0], 8) << t.label;
    } else if (t.label.rfind("grad_reducescatter", 0) == 0) {
      ++dense_syncs;
      EXPECT_EQ(coll->group.size(), 16u) << t.label;
    } else if (coll->op == CollectiveOp::kAllToAll) {
      ++all_to_alls;
      EXPECT_EQ(coll->group.size(), 8u) << t.label;
    }
  }
  // Written by --emit-plan and read back, the plan keeps ep and expert_tp and simulates the same.
  HybridPlan named = p;
  named.model = m.name;
  named.cluster = c.name;
  const std::filesystem::path file = std::filesystem::temp_directory_path() / ("hetsim_ep_plan_" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(file) << hybrid_plan_to_yaml(named);
  const HybridPlan back = load_hybrid_plan(file, m, c);
  std::filesystem::remove(file);
  EXPECT_EQ(back.pipelines[0].stages[0].ep, 8);
  EXPECT_EQ(back.pipelines[0].stages[0].expert_tp, 1);
  EXPECT_DOUBLE_EQ(planner.evaluate(back, "ep8").report.iteration_time_s, ev.report.iteration_time_s);
  EXPECT_EQ(expert_syncs, 4 * 8);  // a bucket per layer (one expert's 176 M weights exceed the 40 M buckets) x 8 shards
  EXPECT_GT(dense_syncs, 0);
  EXPECT_GT(all_to_alls, 0);
  EXPECT_GT(ev.report.iteration_time_s, 0);
}

TEST(ExpertParallel, ThePlannerTriesExpertGroupsAndTheAblationTurnsThemOff) {
  // Mixtral 8x7B (8 layers) on 16 H100: stages whose copies an expert group spans are among the
  // plans judged, and one of them is chosen; --no-moe-parallel leaves every stage at ep 1.
  ModelSpec m = load_model(test::shipped("workloads", "mixtral-8x7b"));
  m.layers = 8;
  m.seq_len = 4096;
  m.training.global_batch = 64;
  const Cluster c = h100_nodes(2);
  HybridPlanner planner(m, c, CostModel{}, SimOptions{});
  HybridOptions with, without;
  without.moe_parallel = false;
  const HybridSearch a = planner.search(HybridFlavour::kHetsim, with);
  const HybridSearch b = planner.search(HybridFlavour::kHetsim, without);
  ASSERT_GE(a.chosen, 0);
  ASSERT_GE(b.chosen, 0);
  EXPECT_GT(a.judged[a.chosen].plan.pipelines[0].stages[0].ep, 1) << a.judged[a.chosen].plan.shape();
  for (const JudgedHybrid& j : b.judged) {
    for (const StagePlan& st : j.plan.pipelines[0].stages) EXPECT_EQ(st.ep, 1) << j.plan.shape();
  }
  EXPECT_LE(a.judged[a.chosen].evaluation.report.iteration_time_s, b.judged[b.chosen].evaluation.report.iteration_time_s);
}

TEST(ExpertParallel, DeepSeekV3FitsEightyGigabytesAtEp64AndNotAtEp8) {
  // DeepSeek-V3 (671 B) as PP 8 stages of 128 H100 (1024 GPUs), tp 1, ZeRO-1, full recompute: a
  // stage holds about 8 layers, 8 x 256 routed experts of 3 x 7168 x 2048 weights (90 G). At EP 64
  // each GPU holds 1/64 of them (1.4 G weights: bf16 weights and fp32 gradients 8.5 GB, optimizer
  // state over the 2 copies of each shard); at EP 8, 1/8 (11.3 G: 68 GB before optimizer state),
  // over the H100's 80 GB.
  ModelSpec m = load_model(test::shipped("workloads", "deepseek-v3"));
  m.training.global_batch = 1024;
  const Cluster c = h100_nodes(128);
  auto plan = [&](int ep) {
    HybridPlan p;
    p.micro_batch = 128;
    p.recompute = RecomputeMode::kFull;
    p.gradient_sync = GradientSync::kZero1;
    PipelinePlan pl;
    pl.micro_batches = 8;
    int next = 0;
    for (int s = 0; s < 8; ++s) {
      StagePlan st;
      st.ep = ep;
      for (int d = 0; d < 128; ++d) st.devices.push_back(128 * s + d);
      const int n = 7 + (s >= 3 ? 1 : 0);  // 3 x 7 + 5 x 8 = 61
      st.chunks = {{next, next + n - 1}};
      next += n;
      pl.stages.push_back(st);
    }
    p.pipelines.push_back(pl);
    return p;
  };
  for (int ep : {64, 8}) ASSERT_EQ(check_hybrid_plan(plan(ep), m, c).size(), 0u) << ep;
  PipelineProgramBuilder builder(m, c, CostModel{});
  const PipelineProgram at64 = builder.build(plan(64));
  const PipelineProgram at8 = builder.build(plan(8));
  EXPECT_TRUE(at64.feasible) << at64.infeasible_reason;
  EXPECT_FALSE(at8.feasible);
  EXPECT_NE(at8.infeasible_reason.find("needs"), std::string::npos) << at8.infeasible_reason;
}

}  // namespace
}  // namespace hetsim
