// File: tests/planner/hybrid/tp_userbuffers_test.cpp
// tp_comm_overlap: userbuffers (Megatron-Core's --tp-comm-overlap): the forward's sequence-parallel
// all-gathers and reduce-scatters cut into chunks pipelined with their GEMMs. Checked against the
// closed form of a pipeline of chunks, and end to end.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "planner/hybrid/hybrid_plan_file.hpp"
#include "planner/hybrid/hybrid_planner.hpp"
#include "planner/hybrid/stage_work.hpp"
#include "one_stage_plan.hpp"
#include "test_support.hpp"

namespace hetsim {
namespace {

Device h100() { return load_device(test::shipped("kernels_profile/devices", "H100-SXM5-80GB")); }

// An H100 whose GEMMs run at one rate whatever their shape, with no launch cost and no memory bound:
// a GEMM cut into chunks takes as long as the whole.
Device shapeless_h100() {
  Device d = h100();
  d.gemm.compute_units = 0;
  d.efficiency.kernel_launch_s = 0;
  d.memory_bandwidth_Bps *= 1e6;
  return d;
}

std::vector<BlockWork> gpt_work(bool userbuffers, GemmPrecision precision = GemmPrecision::kDtype, const Device& device = h100()) {
  ModelSpec m = load_model(test::shipped("workloads", "gpt3-1.3b"));
  m.training.gemm_precision = precision;
  StageWorkKey key{1, 8, true, RecomputeMode::kNone, StageProgram::kMegatron, true, 1, CpComm::kRing, 1, 1, userbuffers};
  return stage_block_work(m, device, DType::kBf16, CostModel{}, key);
}

TEST(TpUserbuffers, ForwardCollectivesAreChunkedWithTheirGemmsAndNothingIsLost) {
  // Under sequence parallelism the all-reduce after a row-parallel GEMM is a reduce-scatter (in 4
  // pipelined chunks beside that GEMM) and an all-gather (a ring exchange of tp = 8 chunks beside
  // the next column-parallel GEMM, in the next layer for the MLP's).
  const std::vector<BlockWork> plain = gpt_work(false, GemmPrecision::kDtype, shapeless_h100()),
                               ub = gpt_work(true, GemmPrecision::kDtype, shapeless_h100());
  ASSERT_EQ(plain.size(), ub.size());
  double rs_plain = 0, ag_plain = 0, rs_ub = 0, ag_ub = 0, rs_alone = 0, ag_alone = 0, hide = 0;
  for (size_t b = 0; b < plain.size(); ++b) {
    SCOPED_TRACE(plain[b].name);
    double block_rs = 0, block_rs_alone = 0;
    for (const WorkPart& x : plain[b].parts) {
      rs_plain += x.tp_fwd.reduce_scatter + x.tp_fwd.all_reduce;
      ag_plain += x.tp_fwd.all_gather + x.tp_fwd.all_reduce;
      block_rs += x.tp_fwd.reduce_scatter + x.tp_fwd.all_reduce;
    }
    for (const WorkPart& y : ub[b].parts) {
      block_rs_alone += y.tp_fwd_exposed.reduce_scatter;
      rs_ub += y.tp_fwd.reduce_scatter + y.tp_fwd.all_reduce + y.tp_fwd_exposed.reduce_scatter + y.tp_fwd_exposed.all_reduce;
      ag_ub += y.tp_fwd.all_gather + y.tp_fwd.all_reduce + y.tp_fwd_exposed.all_gather + y.tp_fwd_exposed.all_reduce;
      rs_alone += y.tp_fwd_exposed.reduce_scatter;
      ag_alone += y.tp_fwd_exposed.all_gather;
      EXPECT_LE(y.tp_fwd_hide_s, y.fwd_s);
      EXPECT_EQ(y.tp_fwd_hide_s > 0, y.tp_fwd_exposed.any());
      hide += y.tp_fwd_hide_s;
    }
    // A layer's reduce-scatters are all beside its row-parallel GEMMs (the embedding's is not a GEMM's).
    if (b > 0 && b + 1 < plain.size()) {
      EXPECT_NEAR(block_rs_alone, block_rs / 4, 1e-9 * block_rs);
    }
    // The same compute in each block (the chunks' GEMMs at the whole one's rate here): seconds only
    // move to the part whose all-gather they run under.
    EXPECT_NEAR(ub[b].fwd_s(), plain[b].fwd_s(), 1e-12 * plain[b].fwd_s());
    EXPECT_NEAR(ub[b].bwd_s(), plain[b].bwd_s(), 1e-12 * plain[b].bwd_s());
  }
  // The same bytes, all but one chunk of each under a GEMM.
  EXPECT_NEAR(rs_ub, rs_plain, 1e-9 * rs_plain);
  EXPECT_NEAR(ag_ub, ag_plain, 1e-9 * ag_plain);
  EXPECT_GT(rs_alone, 0);
  EXPECT_GT(ag_alone, 0);
  EXPECT_LE(ag_alone, ag_plain / 8 * (1 + 1e-9));  // (the embedding's are not chunked)
  EXPECT_GT(hide, 0);
}

TEST(TpUserbuffers, ChunkedGemmsRunAtTheirChunksShape) {
  // Transformer Engine's ring exchange runs a column-split GEMM as tp GEMMs of 1/tp of its rows, its
  // pipelined reduce-scatter a row-split one as 4, each a launch of its own reading the whole weight
  // shard; the ring exchange also cuts a row-split GEMM's data gradient into tp. On H100's shape
  // model (waves over 132 SMs) and launch cost a layer of GPT-3 1.3B at TP 8 (2048 tokens: chunks of
  // 256 and 512 rows) takes longer so; without either (above) exactly as long.
  const std::vector<BlockWork> plain = gpt_work(false), ub = gpt_work(true);
  ASSERT_EQ(plain.size(), ub.size());
  for (size_t b = 1; b + 1 < plain.size(); ++b) {
    SCOPED_TRACE(plain[b].name);
    EXPECT_GT(ub[b].fwd_s(), plain[b].fwd_s() * 1.05);
    EXPECT_GT(ub[b].bwd_s(), plain[b].bwd_s());
    // Not the forward again: only the backward's data gradients of the two row-split GEMMs are cut.
    EXPECT_LT(ub[b].bwd_s() - plain[b].bwd_s(), ub[b].fwd_s() - plain[b].fwd_s());
  }
  // The embedding and the head have no userbuffers.
  EXPECT_DOUBLE_EQ(ub.front().fwd_s(), plain.front().fwd_s());
  EXPECT_DOUBLE_EQ(ub.back().fwd_s(), plain.back().fwd_s());
}

TEST(TpUserbuffers, UnderAnFp8RecipeSequenceParallelGathersMoveFp8) {
  // Transformer Engine casts each rank's sequence shard and all-gathers the 1-byte tensor: the
  // forward's gathers into the layers' column-split GEMMs, the backward's gathers of their input
  // again and of the row-split GEMMs' output gradients move half the bf16 bytes. Reduce-scatters
  // (of outputs and input gradients) stay in bf16.
  const std::vector<BlockWork> bf16 = gpt_work(true), fp8 = gpt_work(true, GemmPrecision::kFp8Current);
  ASSERT_EQ(bf16.size(), fp8.size());
  const auto sum = [](const BlockWork& w, auto field) {
    TpBytes t;
    for (const WorkPart& x : w.parts) t += field(x);
    return t;
  };
  const auto fwd = [](const WorkPart& x) {
    TpBytes t = x.tp_fwd;
    t += x.tp_fwd_exposed;
    return t;
  };
  const auto bwd = [](const WorkPart& x) { return x.tp_bwd; };
  // Layer 1 on: every gather is into, or out of, a GEMM of the recipe (layer 0's first backward
  // gather is the embedding's output gradient, in bf16).
  for (size_t b = 2; b + 1 < bf16.size(); ++b) {
    SCOPED_TRACE(bf16[b].name);
    const TpBytes f16 = sum(bf16[b], fwd), f8 = sum(fp8[b], fwd), b16 = sum(bf16[b], bwd), b8 = sum(fp8[b], bwd);
    ASSERT_GT(f16.all_gather, 0);
    EXPECT_NEAR(f8.all_gather, f16.all_gather / 2, 1e-9 * f16.all_gather);
    EXPECT_NEAR(f8.reduce_scatter, f16.reduce_scatter, 1e-9 * f16.reduce_scatter);
    ASSERT_GT(b16.all_reduce, 0);
    EXPECT_EQ(b8.all_reduce, 0);
    EXPECT_NEAR(b8.reduce_scatter, b16.reduce_scatter + b16.all_reduce, 1e-9 * b16.all_reduce);
    EXPECT_NEAR(b8.all_gather, (b16.all_gather + b16.all_reduce) / 2, 1e-9 * b16.all_reduce);
  }
}

// Llama 2 13B (4 of its layers, 4096 tokens) on one DGX-H100, TP 8 with sequence parallelism, one
// stage, 4 micro-batches: GEMMs and collectives of comparable length.
Evaluation tp8(bool userbuffers, bool tp_overlap = true) {
  ModelSpec m = load_model(test::shipped("workloads", "llama2-13b"));
  m.layers = 4;
  m.training.global_batch = 4;
  const Cluster c = test::fixture_cluster("dgx-h100-16");
  HybridPlan p = test::one_stage_plan(8, 4, 4, 1, 8);
  p.sequence_parallel = true;
  p.tp_comm_overlap = tp_overlap;
  p.tp_comm_userbuffers = userbuffers;
  EXPECT_EQ(check_hybrid_plan(p, m, c).size(), 0u);
  HybridPlanner planner(m, c, CostModel{}, SimOptions{});
  return planner.evaluate(p, "tp8");
}

TEST(TpUserbuffers, TheForwardRunsItsCollectivesUnderItsGemms) {
  const Evaluation bulk = tp8(false), ub = tp8(true);
  ASSERT_TRUE(bulk.report.feasible && ub.report.feasible);
  // The forward's TP collectives on GPU 0, and how much of them runs beside a kernel.
  const auto tp_time = [](const Evaluation& ev, bool only_hidden) {
    double total = 0;
    for (size_t i = 0; i < ev.program.tasks.size(); ++i) {
      const auto* col = std::get_if<CollectiveTask>(&ev.program.tasks[i].body);
      if (col == nullptr || col->stream != CommStream::kTensor || col->group.front() != 0) continue;
      if (ev.program.tasks[i].label.find(".fwd") == std::string::npos) continue;
      const TaskTiming& t = ev.result.tasks[i];
      if (!only_hidden) {
        total += t.end_s - t.start_s;
        continue;
      }
      for (size_t k = 0; k < ev.program.tasks.size(); ++k) {
        const auto* comp = std::get_if<ComputeTask>(&ev.program.tasks[k].body);
        if (comp == nullptr || comp->device != 0 || comp->duration_s <= 0) continue;
        const TaskTiming& c = ev.result.tasks[k];
        total += std::max(0.0, std::min(t.end_s, c.end_s) - std::max(t.start_s, c.start_s));
      }
    }
    return total;
  };
  EXPECT_EQ(tp_time(bulk, true), 0);  // without userbuffers the forward waits for each collective
  const double all = tp_time(ub, false), hidden = tp_time(ub, true);
  EXPECT_GT(hidden, 0.5 * all) << hidden << " of " << all;
  // Shorter by at most what the forward's collectives took, never below the compute alone.
  EXPECT_LT(ub.report.iteration_time_s, bulk.report.iteration_time_s);
  EXPECT_GT(ub.report.iteration_time_s, bulk.report.iteration_time_s - tp_time(bulk, false));
}

TEST(TpUserbuffers, RoundTripsAndNeedsSequenceParallelism) {
  ModelSpec m = load_model(test::shipped("workloads", "gpt3-1.3b"));
  m.training.global_batch = 4;
  const Cluster c = test::fixture_cluster("dgx-h100-16");
  HybridPlan p = test::one_stage_plan(8, 24, 4, 1, 8);
  p.model = m.name;
  p.cluster = c.name;
  p.sequence_parallel = true;
  p.tp_comm_overlap = true;
  p.tp_comm_userbuffers = true;
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("hetsim_ub_plan_" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(file) << hybrid_plan_to_yaml(p);
  const HybridPlan back = load_hybrid_plan(file, m, c);
  std::filesystem::remove(file);
  EXPECT_TRUE(back.tp_comm_userbuffers);
  EXPECT_TRUE(back.tp_comm_overlap);
  EXPECT_NE(back.shape().find("tp comm overlap (userbuffers)"), std::string::npos) << back.shape();
  p.sequence_parallel = false;
  ASSERT_EQ(check_hybrid_plan(p, m, c).size(), 1u);
  EXPECT_EQ(check_hybrid_plan(p, m, c)[0].field, "tp_comm_overlap");
}

}  // namespace
}  // namespace hetsim
