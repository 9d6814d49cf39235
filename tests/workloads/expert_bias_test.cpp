// File: tests/workloads/expert_bias_test.cpp
// GPT-OSS's experts (a model's moe: expert_bias and glu_clamp): the second expert GEMM's bias as
// Megatron-Core adds it per local expert in eager PyTorch, the clamped GLU's extra passes, what the
// cost model charges for them, and bad fields.
#include <gtest/gtest.h>

#include "kernels_profile/cost_model.hpp"
#include "kernels_profile/device.hpp"
#include "test_support.hpp"
#include "workloads/model.hpp"
#include "workloads/op_graph.hpp"

namespace hetsim {
namespace {

TEST(ExpertBias, GptOssStatesBothAndOnlyTheSecondExpertGemmAddsItsBiasEagerly) {
  const ModelSpec m = load_model(test::shipped("workloads", "gpt-oss-120b"));
  ASSERT_TRUE(m.moe);
  EXPECT_TRUE(m.moe->expert_bias);
  EXPECT_DOUBLE_EQ(m.moe->glu_clamp, 7.0);
  const OpGraph g = build_op_graph(m, 1, DType::kBf16);
  const Op fc1 = test::op_named(g, "layer0.expert_fc1");
  const Op fc2 = test::op_named(g, "layer0.expert_fc2");
  EXPECT_FALSE(fc1.eager_expert_bias);  // Transformer Engine adds fc1's in its GEMM
  EXPECT_TRUE(fc2.eager_expert_bias);
  // The biases are parameters: 128 experts x (2 x 2880 + 2880) per layer.
  ModelSpec plain = m;
  plain.moe->expert_bias = false;
  plain.moe->glu_clamp = 0;
  const OpGraph pg = build_op_graph(plain, 1, DType::kBf16);
  EXPECT_DOUBLE_EQ(g.params() - pg.params(), 36.0 * 128 * (2 * 2880 + 2880));
  EXPECT_FALSE(test::op_named(pg, "layer0.expert_fc2").eager_expert_bias);
  // The clamped GLU: both halves of its 2n inputs clamped and concatenated (8n elements forward),
  // their gradients (10n backward), n = the routed rows x 2880.
  const Op act = test::op_named(g, "layer0.expert_act");
  const Op plain_act = test::op_named(pg, "layer0.expert_act");
  const double n = 4096.0 * 4 * 2880;
  EXPECT_DOUBLE_EQ(act.fwd_bytes - plain_act.fwd_bytes, 8 * n * 2);
  EXPECT_DOUBLE_EQ(act.bwd_bytes - plain_act.bwd_bytes, 10 * n * 2);
  EXPECT_DOUBLE_EQ(act.fwd_flops, plain_act.fwd_flops);  // no model FLOPs
}

TEST(ExpertBias, EagerBytesAndKernelsFollowTheLocalExpertsAndTheirRows) {
  Op op = Op::make("expert_fc2", OpKind::kMoeExpert, 0);
  op.gemm = {16, 1024, 2880, 2880};  // 16 local experts of 1024 rows each (EP 8 of GPT-OSS's 128)
  EXPECT_EQ(eager_expert_bias_bytes(op, 2, false).kernels, 0);  // not flagged: nothing
  op.eager_expert_bias = true;
  const double out = 16.0 * 1024 * 2880;
  const EagerGradBytes fwd = eager_expert_bias_bytes(op, 2, false), bwd = eager_expert_bias_bytes(op, 2, true);
  EXPECT_DOUBLE_EQ(fwd.total(), 28 * out);  // fp32 product, fp32 sum, concatenation, cast back
  EXPECT_EQ(fwd.kernels, 2 * 16 + 2);
  EXPECT_DOUBLE_EQ(bwd.total(), 40 * out);
  EXPECT_EQ(bwd.kernels, 5 * 16 + 2);
  // EP 64: two local experts with as many rows each: the kernels per expert, the bytes per row.
  op.gemm.batch = 2;
  EXPECT_EQ(eager_expert_bias_bytes(op, 2, false).kernels, 6);
  EXPECT_DOUBLE_EQ(eager_expert_bias_bytes(op, 2, false).total(), 28 * 2.0 * 1024 * 2880);
}

TEST(ExpertBias, TheCostModelChargesTheEagerBiasInBothPassesAsMemoryBoundKernels) {
  const Device h100 = load_device(test::shipped("kernels_profile/devices", "H100-SXM5-80GB"));
  const CostModel roofline;
  Op op = Op::make("expert_fc2", OpKind::kMoeExpert, 0);
  op.expert = true;
  op.gemm = {16, 1024, 2880, 2880};
  op.fwd_flops = 2.0 * 16 * 1024 * 2880 * 2880;
  op.bwd_flops = 2 * op.fwd_flops;
  op.fwd_bytes = (2.0 * 16 * 1024 * 2880 + 16.0 * 2880 * 2880) * 2;
  op.bwd_bytes = 2 * op.fwd_bytes;
  Op biased = op;
  biased.eager_expert_bias = true;
  const double bw = h100.memory_bandwidth_Bps * h100.efficiency.memory, launch = h100.efficiency.kernel_launch_s;
  for (const Pass pass : {Pass::kForward, Pass::kBackward}) {
    const EagerGradBytes e = eager_expert_bias_bytes(biased, 2, pass == Pass::kBackward);
    const double extra =
        roofline.op_time(h100, biased, DType::kBf16, pass).seconds - roofline.op_time(h100, op, DType::kBf16, pass).seconds;
    EXPECT_NEAR(extra, e.total() / bw + e.kernels * launch, 1e-12) << static_cast<int>(pass);
    EXPECT_GT(extra, 0);
  }
}

TEST(ExpertBias, BadFieldsAreRefusedWithTheirLine) {
  test::expect_model_blocks_refused({
      {"llama", "moe: {experts: 8, top_k: 2, expert_ffn_hidden: 256, expert_bias: maybe}\n", "moe.expert_bias"},
      {"llama", "moe: {experts: 8, top_k: 2, expert_ffn_hidden: 256, glu_clamp: -1}\n", "moe.glu_clamp"},
      {"llama", "moe: {experts: 8, top_k: 2, expert_ffn_hidden: 256, glu_clamp: inf}\n", "moe.glu_clamp"},
      {"gpt", "moe: {experts: 8, top_k: 2, expert_ffn_hidden: 256, expert_bias: true}\n", "moe.expert_bias"},
      {"bert", "moe: {experts: 8, top_k: 2, expert_ffn_hidden: 256, glu_clamp: 7}\n", "moe.glu_clamp"},
  });
}

}  // namespace
}  // namespace hetsim
