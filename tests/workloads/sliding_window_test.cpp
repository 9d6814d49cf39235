// File: tests/workloads/sliding_window_test.cpp
// Sliding-window attention (a model's sliding_window: block): which layers are windowed, the tiles a
// fused kernel computes under the band, the model FLOPs, the cost model's time, and bad blocks.
#include <gtest/gtest.h>

#include "kernels_profile/calibration_profile.hpp"
#include "kernels_profile/cost_model.hpp"
#include "kernels_profile/device.hpp"
#include "planner/hybrid/hybrid_plan.hpp"
#include "test_support.hpp"
#include "topologies/cluster.hpp"
#include "workloads/model.hpp"
#include "workloads/op_graph.hpp"

namespace hetsim {
namespace {

// Brute force over the query tiles of 128: the key tiles each one's window reaches.
double tiles_by_hand(long seq, long window) {
  const long n = (seq + 127) / 128;
  double tiles = 0;
  for (long i = 0; i < n; ++i) {
    for (long j = 0; j <= i; ++j) {
      const long last_query = std::min(seq, (i + 1) * 128) - 1, first_query = i * 128;
      const long first_key = j * 128, last_key = (j + 1) * 128 - 1;
      // Some query q of tile i attends some key of tile j: q - window < key <= q.
      const bool reached = window <= 0 || last_key > first_query - window;
      if (reached && first_key <= last_query) tiles += 1;
    }
  }
  return tiles / static_cast<double>(n * n);
}

TEST(SlidingWindow, TileShareIsTheTilesTheBandReaches) {
  EXPECT_DOUBLE_EQ(flash_tile_share(4096, 0), 33.0 / 64.0);     // causal: n(n + 1) / 2 of n^2
  EXPECT_DOUBLE_EQ(flash_tile_share(4096, 4096), 33.0 / 64.0);  // a window as long as the sequence
  EXPECT_DOUBLE_EQ(flash_tile_share(4096, 128), 63.0 / 1024.0);  // the diagonal tile and the one before, 32 - 1 times
  EXPECT_DOUBLE_EQ(flash_tile_share(256, 128), 3.0 / 4.0);
  EXPECT_DOUBLE_EQ(flash_tile_share(4096, 1), 32.0 / 1024.0);  // the diagonal alone
  for (long seq : {1L, 100L, 128L, 129L, 1000L, 4096L, 8191L}) {
    for (long window : {1L, 2L, 127L, 128L, 129L, 300L, 1024L, 5000L}) {
      const double expected = window >= seq ? tiles_by_hand(seq, 0) : tiles_by_hand(seq, window);
      EXPECT_DOUBLE_EQ(flash_tile_share(seq, window), expected) << seq << " " << window;
    }
  }
}

TEST(SlidingWindow, GptOssAlternatesWindowedAndFullLayers) {
  const ModelSpec m = load_model(test::shipped("workloads", "gpt-oss-120b"));
  ASSERT_TRUE(m.sliding_window);
  EXPECT_EQ(attention_window(m, 0), 128);
  EXPECT_EQ(attention_window(m, 1), 0);
  EXPECT_EQ(attention_window(m, 34), 128);
  EXPECT_EQ(attention_window(m, 35), 0);
  ModelSpec every = m;
  every.sliding_window->full_every = 0;
  for (long layer = 0; layer < m.layers; ++layer) EXPECT_EQ(attention_window(every, layer), 128);
  every.seq_len = 128;  // a window as long as the sequence is no window
  EXPECT_EQ(attention_window(every, 0), 0);
}

TEST(SlidingWindow, WindowedLayersCountTheirKeysAndTimeTheirTiles) {
  // GPT-OSS at s = 4096: a windowed layer's model FLOPs count 128 keys a query, a full layer's 4096;
  // the kernel computes 63 of 1024 tiles against 528 causal ones.
  const ModelSpec m = load_model(test::shipped("workloads", "gpt-oss-120b"));
  const OpGraph g = build_op_graph(m, 1, DType::kBf16, KernelSupport{true});
  const Op* windowed = nullptr;
  const Op* full = nullptr;
  for (const Op& op : g.ops) {
    windowed = op.name == "layer0.attention" ? &op : windowed;
    full = op.name == "layer1.attention" ? &op : full;
  }
  ASSERT_NE(windowed, nullptr);
  ASSERT_NE(full, nullptr);
  const double heads = 64, head_dim = 64;
  EXPECT_DOUBLE_EQ(full->fwd_flops, 2.0 * 4096 * 4096 * heads * 2 * head_dim);
  EXPECT_DOUBLE_EQ(windowed->fwd_flops, 2.0 * 4096 * 128 * heads * 2 * head_dim);
  EXPECT_EQ(windowed->window, 128);
  EXPECT_EQ(full->window, 0);
  EXPECT_DOUBLE_EQ(full->tile_fraction, 528.0 / 1024.0);
  EXPECT_DOUBLE_EQ(windowed->tile_fraction, 63.0 / 1024.0 * 4096.0 / 128.0);  // per model FLOP: above 1
  // Timed from the H100's measured causal rows: the windowed kernel is the causal one times 63 / 528.
  const CalibrationScope raw("none");
  const Device h100 = load_device(test::shipped("kernels_profile/devices", "H100-SXM5-80GB"));
  const CostModel cost;
  const double launch = h100.efficiency.kernel_launch_s;
  for (Pass pass : {Pass::kForward, Pass::kBackward}) {
    const double w = cost.op_time(h100, *windowed, DType::kBf16, pass).seconds - launch;
    const double f = cost.op_time(h100, *full, DType::kBf16, pass).seconds - launch;
    EXPECT_NEAR(w / f, 63.0 / 528.0, 1e-9) << static_cast<int>(pass);
  }
  // The unfused path computes every score and masks it: its kernels take the full time, while its
  // model FLOPs (which MFU counts, from this graph) count the window's keys as the fused path's do.
  ModelSpec unfused = m;
  unfused.training.attention = AttentionKernel::kStandard;
  ModelSpec unwindowed = unfused;
  unwindowed.sliding_window.reset();
  const OpGraph u = build_op_graph(unfused, 1, DType::kBf16), full_u = build_op_graph(unwindowed, 1, DType::kBf16);
  for (const char* name : {"layer0.attn_scores", "layer0.softmax", "layer0.attn_context"}) {
    const Op w = test::op_named(u, name), f = test::op_named(full_u, name);
    EXPECT_DOUBLE_EQ(w.fwd_flops, f.fwd_flops * 128 / 4096) << name;
    for (Pass pass : {Pass::kForward, Pass::kBackward}) {
      EXPECT_NEAR(cost.op_time(h100, w, DType::kBf16, pass).seconds, cost.op_time(h100, f, DType::kBf16, pass).seconds,
                  1e-12) << name;
    }
  }
  EXPECT_EQ(test::op_named(u, "layer1.attn_scores").fwd_flops, test::op_named(full_u, "layer1.attn_scores").fwd_flops);
  // MFU's FLOPs a sample: the full layers' attention over 4096 keys, the windowed ones' over 128.
  EXPECT_LT(model_flops_per_sample(unfused, DType::kBf16), model_flops_per_sample(unwindowed, DType::kBf16));
  EXPECT_DOUBLE_EQ(model_flops_per_sample(m, DType::kBf16), u.model_flops());
}

TEST(SlidingWindow, BadBlocksAreRefusedWithTheirField) {
  test::expect_model_blocks_refused({
      {"llama", "sliding_window: {tokens: 0}\n", "sliding_window.tokens"},
      {"llama", "sliding_window: {tokens: 128, full_every: 1}\n", "sliding_window.full_every"},
      {"llama", "sliding_window: {tokens: 128, every: 2}\n", "sliding_window: unknown key \"every\""},
      {"llama", "sliding_window: {full_every: 2}\n", "sliding_window.tokens"},
      {"bert", "sliding_window: {tokens: 128}\n", "sliding_window"},
  });
}

TEST(SlidingWindow, ContextParallelRingIsRefusedAndAllToAllKept) {
  // Transformer Engine has no sliding-window kernel under cp_comm_type p2p.
  ModelSpec m = load_model(test::shipped("workloads", "gpt-oss-120b"));
  m.seq_len = 8192;
  const Cluster c = load_cluster(test::source_dir() / "studies/validation/clusters/dgx-h100-1.yaml");
  HybridPlan plan;
  plan.model = m.name;
  plan.cluster = c.name;
  plan.micro_batch = 1;
  StagePlan st{{0, 1, 2, 3, 4, 5, 6, 7}, 1, {LayerRange{0, 35}}, 8};
  plan.pipelines.push_back({8, {st}});
  const auto problems = [&](CpComm comm) {
    plan.cp_comm = comm;
    std::string all;
    for (const PlanProblem& p : check_hybrid_plan(plan, m, c)) all += p.field + ": " + p.message + "\n";
    return all;
  };
  EXPECT_NE(problems(CpComm::kRing).find("sliding-window"), std::string::npos);
  EXPECT_EQ(problems(CpComm::kAllToAll).find("sliding-window"), std::string::npos);
}

}  // namespace
}  // namespace hetsim
