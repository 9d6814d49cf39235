// File: tests/workloads/multi_token_prediction_test.cpp
// Multi-token prediction (mtp_layers): each module's operators beside the head, with the shapes
// DeepSeek-V3's report (Section 2.2) and Megatron-Core's MultiTokenPredictionLayer give them, and
// the fields a model file may not set.
#include <gtest/gtest.h>

#include "test_support.hpp"
#include "workloads/op_graph.hpp"

namespace hetsim {
namespace {

TEST(MultiTokenPrediction, EachModuleEmbedsProjectsAndRunsTheSharedHeadAgain) {
  ModelSpec m = load_model(test::shipped("workloads", "deepseek-v3"));
  m.layers = 5;
  const OpGraph plain = build_op_graph(m, 2, DType::kBf16, {true});
  m.mtp_layers = 1;
  const OpGraph g = build_op_graph(m, 2, DType::kBf16, {true});
  const double tokens = 2.0 * static_cast<double>(m.seq_len), h = static_cast<double>(m.hidden);
  // The module's own operators, all on the head's block (layer == layers: the last stage).
  for (const char* n : {"mtp1.embedding", "mtp1.embedding_norm", "mtp1.hidden_norm", "mtp1.eh_proj", "mtp1.final_norm",
                        "mtp1.lm_head", "mtp1.loss"}) {
    EXPECT_EQ(test::op_named(g, n).layer, m.layers) << n;
  }
  EXPECT_EQ(g.ops.size(), plain.ops.size() + 7);
  // eh_proj: [tokens, 2h] x [2h, h] over the two normalised inputs; the hidden state is the last layer's output.
  const Op proj = test::op_named(g, "mtp1.eh_proj");
  EXPECT_EQ(proj.gemm.m, static_cast<long>(tokens));
  EXPECT_EQ(proj.gemm.k, 2 * m.hidden);
  EXPECT_EQ(proj.gemm.n, m.hidden);
  EXPECT_DOUBLE_EQ(proj.params, 2 * h * h);
  const auto index = [&](const std::string& n) {
    for (size_t i = 0; i < g.ops.size(); ++i) {
      if (g.ops[i].name == n) return static_cast<int>(i);
    }
    return -1;
  };
  EXPECT_EQ(proj.inputs, (std::vector<int>{index("mtp1.embedding_norm"), index("mtp1.hidden_norm")}));
  EXPECT_EQ(test::op_named(g, "mtp1.hidden_norm").inputs, (std::vector<int>{index("layer4.mlp_residual")}));
  // The output head is shared: the same work as the model's, no parameters of its own; the table
  // lookup is the embedding's (no parameters either). What is added: eh_proj and three norms.
  const Op head = test::op_named(g, "lm_head"), again = test::op_named(g, "mtp1.lm_head");
  EXPECT_DOUBLE_EQ(again.fwd_flops, head.fwd_flops);
  EXPECT_DOUBLE_EQ(again.saved_bytes, head.saved_bytes);
  EXPECT_EQ(again.params, 0);
  EXPECT_EQ(test::op_named(g, "mtp1.embedding").params, 0);
  EXPECT_DOUBLE_EQ(test::op_named(g, "mtp1.loss").saved_bytes, test::op_named(g, "loss").saved_bytes);
  EXPECT_NEAR(g.params() - plain.params(), 2 * h * h + 3 * h, 1e-6 * g.params());
  EXPECT_GT(g.model_flops(), plain.model_flops() + 3 * head.fwd_flops * 0.99);
}

TEST(MultiTokenPrediction, BadFieldsAreRefusedAtTheirLine) {
  test::expect_model_blocks_refused({
      {"bert", "mtp_layers: 1\n", "mtp_layers"},
      {"llama", "mtp_layers: 4\n", "mtp_layers"},  // not fewer than the 4 layers
      {"gpt", "mtp_layers: -1\n", "mtp_layers"},
      {"gpt", "mtp_layers: 1.5\n", "mtp_layers"},
  });
}

}  // namespace
}  // namespace hetsim
