// File: tests/planner/hybrid/context_parallel_test.cpp
// Context parallelism (stage field cp): each GPU's share of a layer against closed forms (1/cp of
// the work, attention included, under causal balance), the ring's and the all-to-all's bytes, and
// whole plans that simulate with the per-GPU compute the closed form gives.
#include <gtest/gtest.h>

#include "planner/hybrid/hybrid_planner.hpp"
#include "planner/hybrid/stage_work.hpp"
#include "test_support.hpp"

namespace hetsim {
namespace {

// llama2-7b with flash attention, bf16, on an H100 whose GEMMs run at one efficiency whatever their
// shape (so that 1/cp of the FLOPs is 1/cp of the time, launches aside).
struct Llama {
  ModelSpec model = load_model(test::shipped("workloads", "llama2-7b"));
  Device h100 = load_device(test::shipped("kernels_profile/devices", "H100-SXM5-80GB"));
  Llama() { h100.gemm = GemmModel{}; }
  std::vector<BlockWork> work(long samples, int tp, int cp, CpComm comm = CpComm::kRing, RecomputeMode r = RecomputeMode::kNone) const {
    StageWorkKey key{samples, tp, false, r, StageProgram::kMegatron, true, cp, comm};
    return stage_block_work(model, h100, DType::kBf16, CostModel{}, key);
  }
};

double attention_s(const BlockWork& b) {
  double s = 0;
  for (const WorkPart& p : b.parts) s += p.cp_hide_fwd_s;
  return s;
}

TEST(ContextParallel, EachGpuComputesOneCpThOfTheLayerAttentionIncluded) {
  // Causal balance (2 x cp chunks): every operator's FLOPs, attention's too, are 1/cp of cp = 1's;
  // with a shape-independent GEMM efficiency each kernel's time is launch + (time - launch) / cp.
  const Llama s;
  const std::vector<BlockWork> one = s.work(1, 2, 1);
  const double launch = s.h100.efficiency.kernel_launch_s;
  for (int cp : {2, 4, 8}) {
    SCOPED_TRACE("cp " + std::to_string(cp));
    const std::vector<BlockWork> w = s.work(1, 2, cp);
    EXPECT_NEAR(w[1].model_flops, one[1].model_flops / cp, 1e-9 * one[1].model_flops);
    EXPECT_EQ(w[1].params, one[1].params);  // weights are whole on every CP rank
    EXPECT_NEAR(w[1].saved_bytes, one[1].saved_bytes / cp, 1e-9 * one[1].saved_bytes);
    // The flash attention kernel (one launch) against cp = 2's: (t_cp - launch) = (t_2 - launch) x 2 / cp.
    const double two = attention_s(s.work(1, 2, 2)[1]);
    EXPECT_NEAR(attention_s(w[1]) - launch, (two - launch) * 2 / cp, 1e-9 * two);
  }
}

TEST(ContextParallel, RingSendsEachRanksKeysAndValuesOnceAroundTheGroup) {
  // Per layer and GPU at tp 2, micro-batch 1: a rank's K and V are s/cp tokens x 2 x (8 kv heads...
  // llama2-7b has 32 of 128 dims, no GQA) 4096 / tp x 2 bytes; ring attention passes them cp - 1
  // steps forward (the all-gather of cp of them), the backward K, V and their gradients.
  const Llama s;
  for (int cp : {2, 4, 8}) {
    SCOPED_TRACE("cp " + std::to_string(cp));
    const double block = 4096.0 / cp * 2 * 4096 / 2 * 2;  // bytes a rank sends per step
    const std::vector<BlockWork> w = s.work(1, 2, cp);
    double fwd = 0, bwd = 0;
    for (const WorkPart& p : w[1].parts) {
      fwd += p.cp_ring_fwd;
      bwd += p.cp_ring_bwd;
    }
    // An all-gather of size S over cp ranks sends (cp - 1)/cp S from each: cp - 1 steps of one block.
    EXPECT_DOUBLE_EQ(fwd * (cp - 1) / cp, (cp - 1) * block);
    EXPECT_DOUBLE_EQ(bwd * (cp - 1) / cp, 2 * (cp - 1) * block);
    // All-to-all attention instead: Q, K, V before and the output after, each way, as the
    // all-to-alls' buffers ((cp - 1)/cp of each leaves the GPU).
    const std::vector<BlockWork> a = s.work(1, 2, cp, CpComm::kAllToAll);
    double a2a_fwd = 0, ring = 0;
    for (const WorkPart& p : a[1].parts) {
      a2a_fwd += p.cp_fwd.all_to_all;
      ring += p.cp_ring_fwd;
    }
    const double tokens = 4096.0 / cp, share = (cp - 1.0) / cp;
    EXPECT_DOUBLE_EQ(a2a_fwd * share, tokens * (3 * 4096.0) / 2 * 2 * share + tokens * 4096.0 / 2 * 2 * share);
    EXPECT_EQ(ring, 0);
  }
}

TEST(ContextParallel, ARecomputedForwardExchangesAgainWhatItsAttentionNeeds) {
  // Ring attention's recomputed core needs the other ranks' K and V again (full and selective
  // recompute); a fully recomputed layer re-sends its all-to-alls, a selective one kept their outputs.
  Llama s;
  s.model.training.attention = AttentionKernel::kStandard;  // selective recompute re-runs its core (flash saves none)
  for (RecomputeMode r : {RecomputeMode::kFull, RecomputeMode::kSelective}) {
    SCOPED_TRACE(std::string(recompute_name(r)));
    const BlockWork ring = s.work(1, 2, 4, CpComm::kRing, r)[1], a2a = s.work(1, 2, 4, CpComm::kAllToAll, r)[1];
    double fwd_ring = 0, hide = 0, fwd_a2a = 0;
    for (const WorkPart& p : ring.parts) fwd_ring += p.cp_ring_fwd, hide += p.cp_hide_fwd_s;
    for (const WorkPart& p : a2a.parts) fwd_a2a += p.cp_fwd.all_to_all;
    ASSERT_GT(ring.recompute_s, 0);
    EXPECT_DOUBLE_EQ(ring.recompute_cp_ring, fwd_ring);
    EXPECT_DOUBLE_EQ(ring.recompute_cp_hide_s, std::min(hide, ring.recompute_s));
    EXPECT_FALSE(ring.recompute_cp.any());
    EXPECT_EQ(a2a.recompute_cp_ring, 0);
    EXPECT_DOUBLE_EQ(a2a.recompute_cp.all_to_all, r == RecomputeMode::kFull ? fwd_a2a : 0.0);
  }
  EXPECT_EQ(s.work(1, 2, 4, CpComm::kRing, RecomputeMode::kNone)[1].recompute_cp_ring, 0);
}

TEST(ContextParallel, PlansSimulateWithTheComputeOfTheirTokens) {
  // llama2-7b at sequence 16384 on 32 H100 (4 nodes): two stages of 16 GPUs, tp 4. With cp 2 and
  // dp 2 every GPU runs 2 samples x 8192 tokens; with cp 1 and dp 4, 1 sample x 16384: the same
  // tokens, the same attention work (2 x s^2/2 against s^2) and the same GEMM shapes, so the same
  // compute per GPU to within the kernels' launches. Both simulate; ring and all-to-all alike.
  ModelSpec m = load_model(test::shipped("workloads", "llama2-7b"));
  m.seq_len = 16384;
  m.training.global_batch = 16;
  const Cluster c = load_cluster(test::source_dir() / "studies/validation/clusters/dgx-h100-4.yaml");
  // Compute alone: the attention beside ring attention's exchange (the recomputed one's too) is
  // slowed by the measured interference, which is not what this compares.
  SimOptions o;
  o.collective_interference = false;
  HybridPlanner planner(m, c, CostModel{}, o);
  auto plan = [&](int cp, CpComm comm) {
    HybridPlan p;
    p.micro_batch = 4;
    p.recompute = RecomputeMode::kFull;
    p.gradient_sync = GradientSync::kZero1;
    p.cp_comm = comm;
    PipelinePlan pl;
    pl.micro_batches = 4;
    for (int s = 0; s < 2; ++s) {
      StagePlan st;
      st.tp = 4;
      st.cp = cp;
      for (int d = 0; d < 16; ++d) st.devices.push_back(16 * s + d);
      st.chunks = {{16 * s, 16 * s + 15}};
      pl.stages.push_back(st);
    }
    p.pipelines.push_back(pl);
    return p;
  };
  const HybridPlan base = plan(1, CpComm::kRing);
  ASSERT_EQ(check_hybrid_plan(base, m, c).size(), 0u);
  const Evaluation plain = planner.evaluate(base, "cp1");
  ASSERT_TRUE(plain.report.feasible) << plain.report.infeasible_reason;
  for (CpComm comm : {CpComm::kRing, CpComm::kAllToAll}) {
    SCOPED_TRACE(std::string(cp_comm_name(comm)));
    const HybridPlan p = plan(2, comm);
    ASSERT_EQ(check_hybrid_plan(p, m, c).size(), 0u);
    const Evaluation ev = planner.evaluate(p, "cp2");
    ASSERT_TRUE(ev.report.feasible) << ev.report.infeasible_reason;
    for (int d : {0, 5, 16, 31}) {
      EXPECT_NEAR(ev.report.devices[d].compute_s, plain.report.devices[d].compute_s, 0.01 * plain.report.devices[d].compute_s) << d;
    }
    EXPECT_GE(ev.report.iteration_time_s, ev.report.devices[0].compute_s);
    // The exchanges are in the program: ring all-gathers, or all-to-alls, over CP groups of two.
    int exchanges = 0, recomputed = 0;
    for (const Task& t : ev.program.tasks) {
      const auto* coll = std::get_if<CollectiveTask>(&t.body);
      if (coll == nullptr || t.label.find(".cp") == std::string::npos) continue;
      ++exchanges;
      if (t.label.find(".recompute.cp") != std::string::npos) ++recomputed;  // the full recompute's, again
      EXPECT_EQ(coll->group.size(), 2u);
      EXPECT_EQ(coll->op, comm == CpComm::kRing ? CollectiveOp::kAllGather : CollectiveOp::kAllToAll);
    }
    EXPECT_GT(exchanges, 0);
    EXPECT_GT(recomputed, 0);
  }
}

TEST(ContextParallel, BadFieldsAreRefused) {
  const ModelSpec m = load_model(test::shipped("workloads", "llama2-7b"));
  const Cluster c = load_cluster(test::source_dir() / "studies/validation/clusters/dgx-h100-4.yaml");
  HybridPlan p;
  p.micro_batch = 1;
  p.cp_comm = CpComm::kAllToAll;
  PipelinePlan pl;
  pl.micro_batches = 1024;
  StagePlan st;
  st.tp = 8;
  st.cp = 3;
  for (int d = 0; d < 24; ++d) st.devices.push_back(d);
  st.chunks = {{0, 31}};
  pl.stages.push_back(st);
  p.pipelines.push_back(pl);
  std::vector<std::string> got;
  for (const PlanProblem& x : check_hybrid_plan(p, m, c)) got.push_back(x.field + ": " + x.message);
  // 4096 is not divisible by 2 x 3; 32 heads / tp 8 = 4 per rank, not divisible by 3.
  EXPECT_NE(std::find(got.begin(), got.end(),
                      "pipelines[0].stages[0].cp: cp 3 needs seq_len divisible by 2 x cp = 6 (the sequence is cut in 2 x "
                      "cp chunks for causal balance); the model's is 4096"),
            got.end());
  EXPECT_NE(std::find(got.begin(), got.end(),
                      "pipelines[0].stages[0].cp: cp_comm all-to-all gives each CP rank whole heads: cp 3 must divide "
                      "the 4 key/value heads of a TP rank"),
            got.end());
}

}  // namespace
}  // namespace hetsim
