// File: tests/workloads/eager_kernels_test.cpp
// training.kernels: eager: the backward kernels PyTorch's autograd runs around linear layers (bias
// gradients) and the packed QKV output's views, their bytes and their cost.
#include <gtest/gtest.h>

#include "kernels_profile/cost_model.hpp"
#include "kernels_profile/device.hpp"
#include "test_support.hpp"
#include "workloads/op_graph.hpp"

namespace hetsim {
namespace {

TEST(EagerKernels, ByHandOnePackedProjection) {
  Op op = Op::make("qkv", OpKind::kLinear, 0);
  op.gemm = {2, 10, 6, 4};  // two batches of a [10 x 4] . [4 x 6]: an output of 120 elements
  EXPECT_EQ(eager_grad_bytes(op, 2).total(), 0);  // fused: none
  EXPECT_EQ(eager_grad_bytes(op, 2).kernels, 0);
  op.eager_bias_grad = true;
  EagerGradBytes g = eager_grad_bytes(op, 2);
  EXPECT_DOUBLE_EQ(g.bias_grad, (120 + 2 * 6) * 2);  // read the output gradient, write a row per batch
  EXPECT_EQ(g.kernels, 1);
  op.eager_views = 3;
  g = eager_grad_bytes(op, 2);
  EXPECT_DOUBLE_EQ(g.fill, 3 * 120 * 2);           // three zero-filled outputs
  EXPECT_DOUBLE_EQ(g.copy, (2 * 120 + 2 * 120) * 2);  // the thirds copied in; the sum copied back
  EXPECT_DOUBLE_EQ(g.add, 2 * 3 * 120 * 2);         // two adds, each two outputs read and one written
  EXPECT_EQ(g.kernels, 1 + 3 + 3 + 1 + 2);
  op.eager_views = 1;  // one view is the output itself: nothing to assemble
  EXPECT_DOUBLE_EQ(eager_grad_bytes(op, 2).total(), g.bias_grad);
}

TEST(EagerKernels, EagerGraphsMarkBiasedLinearsAndPackedQkvOnly) {
  ModelSpec gpt = load_model(test::shipped("workloads", "gpt3-1.3b"));
  const OpGraph fused = build_op_graph(gpt, 1, DType::kBf16);
  for (const Op& op : fused.ops) {
    EXPECT_FALSE(op.eager_bias_grad) << op.name;  // the default is fused
    EXPECT_EQ(op.eager_views, 0) << op.name;
  }
  gpt.training.kernels = TrainingKernels::kEager;
  const OpGraph eager = build_op_graph(gpt, 1, DType::kBf16);
  ASSERT_EQ(eager.ops.size(), fused.ops.size());  // the same operators, FLOPs and traffic
  EXPECT_DOUBLE_EQ(eager.model_flops(), fused.model_flops());
  EXPECT_TRUE(test::op_named(eager, "layer0.qkv").eager_bias_grad);
  EXPECT_EQ(test::op_named(eager, "layer0.qkv").eager_views, 3);
  EXPECT_TRUE(test::op_named(eager, "layer0.mlp_down").eager_bias_grad);
  EXPECT_EQ(test::op_named(eager, "layer0.mlp_down").eager_views, 0);
  for (const Op& op : eager.ops) {
    if (op.kind != OpKind::kLinear) {
      EXPECT_FALSE(op.eager_bias_grad) << op.name;
    }
  }
  // Llama: linear layers without biases, q, k and v projected apart (grouped K/V heads)
  ModelSpec llama = load_model(test::shipped("workloads", "llama2-7b"));
  llama.training.kernels = TrainingKernels::kEager;
  for (const Op& op : build_op_graph(llama, 1, DType::kBf16).ops) {
    EXPECT_FALSE(op.eager_bias_grad) << op.name;
    EXPECT_EQ(op.eager_views, 0) << op.name;
  }
}

TEST(EagerKernels, CostOnlyTheBackwardAndScaleWithTheShard) {
  ModelSpec gpt = load_model(test::shipped("workloads", "gpt3-1.3b"));
  gpt.training.kernels = TrainingKernels::kEager;
  const Op qkv = test::op_named(build_op_graph(gpt, 2, DType::kBf16), "layer0.qkv");
  Op fused = qkv;
  fused.eager_bias_grad = false;
  fused.eager_views = 0;
  const CostModel raw;  // the roofline alone: the difference is the eager kernels' bytes and launches
  const Device h100 = load_shipped_device("H100-SXM5-80GB", Diagnostic{});
  EXPECT_DOUBLE_EQ(raw.op_time(h100, qkv, DType::kBf16, Pass::kForward).seconds,
                   raw.op_time(h100, fused, DType::kBf16, Pass::kForward).seconds);
  const double extra = raw.op_time(h100, qkv, DType::kBf16, Pass::kBackward).seconds -
                       raw.op_time(h100, fused, DType::kBf16, Pass::kBackward).seconds;
  const EagerGradBytes g = eager_grad_bytes(qkv, 2);
  const double memory_s = g.total() / (h100.memory_bandwidth_Bps * h100.efficiency.memory);
  EXPECT_NEAR(extra, memory_s + g.kernels * h100.efficiency.kernel_launch_s, 1e-12);
  EXPECT_GT(memory_s, 0);
  // A column-split shard (TP 4) has a quarter of the output: a quarter of the bytes.
  Op shard = qkv;
  shard.gemm.n /= 4;
  EXPECT_NEAR(eager_grad_bytes(shard, 2).total() * 4, g.total(), g.total() * 1e-3);
}

}  // namespace
}  // namespace hetsim
