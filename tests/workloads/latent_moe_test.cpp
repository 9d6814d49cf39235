// File: tests/workloads/latent_moe_test.cpp
// Latent MoE (moe.latent_size) and the multi-token prediction modules of a hybrid model (mtp_pattern,
// mtp_shared, training.mtp_in_dtype): the shipped Nemotron 3 Super against its checkpoint's tensor
// counts, the latent layer's operators and token exchange in closed form, shared MTP weights, the MTP
// passes' precision, and what the model reader refuses.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "kernels_profile/device.hpp"
#include "planner/hybrid/op_shard.hpp"
#include "planner/hybrid/stage_work.hpp"
#include "test_support.hpp"
#include "workloads/gemm_precision.hpp"
#include "workloads/op_graph.hpp"

namespace hetsim {
namespace {

double params_of_layers(const OpGraph& g, long from, long to) {
  double p = 0;
  for (const Op& op : g.ops) p += op.layer >= from && op.layer < to ? op.params : 0;
  return p;
}

double mtp_head_params(const OpGraph& g) {
  double p = 0;
  for (const Op& op : g.ops) p += op.name.rfind("mtp", 0) == 0 ? op.params : 0;
  return p;
}

TEST(LatentMoe, NemotronThreeSuperHasItsCheckpointsTensorCounts) {
  // Its BF16 checkpoint's tensors (nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-BF16 safetensors headers):
  // 123,611,012,096 weights, of which the MTP module's 2,942,324,736 (one set, used by both passes).
  const ModelSpec m = load_model(test::shipped("workloads", "nemotron-3-super"));
  EXPECT_EQ(main_layers(m), 88);
  EXPECT_EQ(mtp_module_layers(m), 2);
  ASSERT_TRUE(m.moe);
  EXPECT_EQ(moe_token_width(m), 1024);
  const OpGraph g = build_op_graph(m, 1, m.training.dtype);
  EXPECT_DOUBLE_EQ(g.params(), 123'611'012'096.0);
  EXPECT_DOUBLE_EQ(params_of_layers(g, 88, 92) + mtp_head_params(g), 2'942'324'736.0);
  // The second pass owns nothing: its layers (90, 91) and its head's norms and eh_proj run the first's.
  EXPECT_DOUBLE_EQ(params_of_layers(g, 90, 92), 0.0);
  EXPECT_TRUE(reuses_mtp_weights(m, 90));
  EXPECT_FALSE(reuses_mtp_weights(m, 89));
  EXPECT_FALSE(reuses_mtp_weights(m, 92));  // the heads' layer index
  // ... but computes as much as the first.
  double first = 0, second = 0;
  for (const Op& op : g.ops) {
    if (op.layer == 88 || op.layer == 89) first += op.fwd_flops + op.bwd_flops;
    if (op.layer == 90 || op.layer == 91) second += op.fwd_flops + op.bwd_flops;
  }
  EXPECT_GT(first, 0);
  EXPECT_DOUBLE_EQ(second, first);
  // Published 12.77B active (12,770,216,960 without the MTP module): hetsim's active count less the
  // MTP layers' and heads' active parameters.
  double mtp_active = 0;
  for (const Op& op : g.ops) {
    const bool mtp = (op.layer >= 88 && op.layer < 90) || op.name.rfind("mtp1.", 0) == 0;
    if (mtp) mtp_active += op.expert ? g.routed_share * op.params : op.params;
  }
  EXPECT_NEAR((g.active_params() - mtp_active) / 12'770'216'960.0, 1.0, 0.002) << g.active_params() - mtp_active;
}

TEST(LatentMoe, TheRoutedPathRunsAtTheLatentWidthBetweenTwoProjections) {
  const ModelSpec m = load_model(test::shipped("workloads", "nemotron-3-super"));
  const OpGraph g = build_op_graph(m, 1, m.training.dtype);
  const double t = 8192, h = 4096, l = 1024, f = 2688, k = 22, experts = 512;
  const Op down = test::op_named(g, "layer1.moe_latent_in"), up = test::op_named(g, "layer1.moe_latent_out");
  EXPECT_EQ(down.gemm.k, 4096);
  EXPECT_EQ(down.gemm.n, 1024);
  EXPECT_DOUBLE_EQ(down.fwd_flops, 2 * t * h * l);
  EXPECT_DOUBLE_EQ(up.fwd_flops, 2 * t * l * h);
  EXPECT_DOUBLE_EQ(down.params + up.params, 2 * h * l);  // no biases
  // The down-projection reads the norm's output the router keeps (kept once); the up-projection keeps
  // the combined latent rows for its weight gradient.
  EXPECT_EQ(down.saved_bytes, 0);
  EXPECT_DOUBLE_EQ(up.saved_bytes, t * l * 2);
  // The experts read and write the latent (squared ReLU: one ungated fc1).
  const Op fc1 = test::op_named(g, "layer1.expert_fc1"), fc2 = test::op_named(g, "layer1.expert_fc2");
  EXPECT_EQ(fc1.gemm.k, 1024);
  EXPECT_EQ(fc2.gemm.n, 1024);
  EXPECT_DOUBLE_EQ(fc1.params + fc2.params, experts * 2 * l * f);
  // Megatron-Bridge's model FLOPs of a latent MoE layer's routed path (training/utils/flop_utils.py at
  // 067f987d: 4·T·l·F·k + 4·T·h·l, forward and backward as 3x a forward's 2·m·n·k per GEMM, halved
  // there to forward FLOPs): the forward GEMMs here.
  EXPECT_DOUBLE_EQ(fc1.fwd_flops + fc2.fwd_flops + down.fwd_flops + up.fwd_flops, 4 * t * l * f * k + 4 * t * h * l);
  // The permutation moves latent rows; the shared expert and the router read the hidden state.
  EXPECT_EQ(test::op_named(g, "layer1.moe_permute").shape.back(), 1024);
  EXPECT_EQ(test::op_named(g, "layer1.shared_fc1").gemm.k, 4096);
  EXPECT_EQ(test::op_named(g, "layer1.router").gemm.k, 4096);
  // Under tensor parallelism the projections work on each GPU's sequence share, their weights whole
  // (Megatron-Core's parallel_mode "duplicated").
  EXPECT_EQ(megatron_split(down, true), TpSplit::kSequence);
  EXPECT_EQ(megatron_split(up, false), TpSplit::kReplicated);
}

TEST(LatentMoe, TheTokenExchangeMovesLatentRows) {
  // The same model with and without the latent: the dispatch and combine bytes per GPU scale by
  // latent / hidden = 1/4, everything else about the exchange alike.
  ModelSpec latent = load_model(test::shipped("workloads", "nemotron-3-super"));
  latent.seq_len = 2048;
  ModelSpec plain = latent;
  plain.moe->latent_size = 0;
  const Device gb300 = load_device(test::shipped("kernels_profile/devices", "GB300"));
  const auto exchanged = [&](const ModelSpec& m) {
    StageWorkKey key{1, 1, false, RecomputeMode::kNone, StageProgram::kMegatron, true, 1, CpComm::kRing, 64, 1};
    double bytes = 0;
    for (const BlockWork& b : stage_block_work(m, gb300, DType::kBf16, CostModel{}, key)) {
      for (const WorkPart& p : b.parts) bytes += p.ep_fwd.all_to_all + p.ep_bwd.all_to_all;
    }
    return bytes;
  };
  const double with_latent = exchanged(latent), without = exchanged(plain);
  ASSERT_GT(without, 0);
  EXPECT_DOUBLE_EQ(with_latent / without, 1024.0 / 4096.0);
  // Per MoE layer and pass: T x top_k rows of the latent's width in bf16, out and back.
  EXPECT_DOUBLE_EQ(with_latent, 42 * 2 * 2 * (2048.0 * 22 * 1024 * 2));
}

TEST(LatentMoe, TheMtpPassesStayInTheDtypeWhereTheRecipeKeepsThem) {
  const ModelSpec m = load_model(test::source_dir() / "studies/validation/models/nemotron-3-super-mxfp8.yaml");
  EXPECT_TRUE(m.training.mtp_in_dtype);
  EXPECT_EQ(gemm_precision_layers(m), 88);
  const OpGraph g = build_op_graph(m, 1, m.training.dtype);
  EXPECT_TRUE(test::op_named(g, "layer87.expert_fc1").gemm_dtype.has_value());
  EXPECT_TRUE(test::op_named(g, "layer1.moe_latent_in").gemm_dtype.has_value());
  EXPECT_FALSE(test::op_named(g, "layer89.expert_fc1").gemm_dtype.has_value());
  EXPECT_FALSE(test::op_named(g, "layer88.qkv").gemm_dtype.has_value());
  EXPECT_EQ(test::op_named(g, "layer88.qkv").cast_fwd_bytes, 0);
  // Without the flag every layer's GEMMs take the recipe's format.
  ModelSpec all = m;
  all.training.mtp_in_dtype = false;
  EXPECT_TRUE(test::op_named(build_op_graph(all, 1, all.training.dtype), "layer89.expert_fc1").gemm_dtype.has_value());
}

TEST(LatentMoe, BadLatentAndMtpFieldsAreRefusedAtTheirField) {
  // Each block on line 9 of a 4-layer model (test::expect_model_blocks_refused), the refused field first.
  const std::string hybrid = "hybrid_pattern: \"ME*E\"\nmamba: {heads: 8}\nmoe: {experts: 8, top_k: 2, expert_ffn_hidden: 64}\n";
  test::expect_model_blocks_refused({
      {"llama", "moe: {experts: 8, top_k: 2, expert_ffn_hidden: 64, latent_size: 0}\n", "latent_size"},
      {"llama", "mtp_pattern: \"*\"\nmtp_layers: 1\n", "without one each module is one transformer layer"},
      {"llama", "mtp_pattern: \"*E\"\n" + hybrid, "but the model has none (mtp_layers)"},
      {"llama", "mtp_pattern: \"E*\"\nmtp_layers: 1\n" + hybrid, "must read \"E*\""},
      {"llama", "mtp_pattern: \"*x\"\nmtp_layers: 1\n" + hybrid, "character 'x' at position 1"},
      {"llama", "mtp_pattern: \"\"\nmtp_layers: 1\n" + hybrid, "is empty"},
      {"llama", "mtp_pattern: \"*E\"\nmtp_layers: 2\nhybrid_pattern: \"*E*E\"\nmoe: {experts: 8, top_k: 2, expert_ffn_hidden: 64}\n",
       "with at least one layer before them"},
      {"llama", "mtp_shared: true\n", "mtp_shared"},
  });
  // training.mtp_in_dtype without prediction modules, at its line.
  const std::filesystem::path path = test::temp("mtp-in-dtype.yaml");
  std::ofstream(path) << "name: m\nfamily: llama\nlayers: 4\nhidden: 256\nheads: 4\nffn_hidden: 512\nseq_len: 1024\nvocab: 1000\n"
                      << "training:\n  global_batch: 8\n  micro_batch: 1\n  dtype: bf16\n  mtp_in_dtype: true\n";
  try {
    (void)load_model(path);
    ADD_FAILURE() << "mtp_in_dtype without mtp_layers accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("mtp-in-dtype.yaml:13"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("mtp_in_dtype"), std::string::npos) << e.what();
  }
  // Well placed, they load: two shared modules of "E*" after "ME".
  const std::filesystem::path good = test::temp("good-mtp.yaml");
  std::ofstream(good) << "name: m\nfamily: llama\nlayers: 6\nhidden: 256\nheads: 4\nffn_hidden: 512\nseq_len: 1024\nvocab: 1000\n"
                      << "hybrid_pattern: \"MEE*E*\"\nmamba: {heads: 8}\nmoe: {experts: 8, top_k: 2, expert_ffn_hidden: 64, latent_size: 64}\n"
                      << "mtp_layers: 2\nmtp_pattern: \"E*\"\nmtp_shared: true\n"
                      << "training: {global_batch: 8, micro_batch: 1, dtype: bf16, gemm_precision: mxfp8, mtp_in_dtype: true}\n";
  const ModelSpec m = load_model(good);
  EXPECT_EQ(main_layers(m), 2);
  EXPECT_TRUE(m.mtp_shared);
  EXPECT_TRUE(m.training.mtp_in_dtype);
  EXPECT_EQ(moe_token_width(m), 64);
}

}  // namespace
}  // namespace hetsim
