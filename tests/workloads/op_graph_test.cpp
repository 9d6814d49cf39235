// File: tests/workloads/op_graph_test.cpp
#include "workloads/op_graph.hpp"

#include <gtest/gtest.h>

#include "kernels_profile/calibration_profile.hpp"

#include "base/data_dir.hpp"
#include "kernels_profile/cost_model.hpp"
#include "kernels_profile/device.hpp"
#include "test_support.hpp"

namespace hetsim {
namespace {

TEST(Model, EveryShippedModelLoads) {
  const std::vector<std::string> names = shipped_names("workloads");
  EXPECT_EQ(names.size(), 26u);
  for (const std::string& n : names) {
    const ModelSpec m = load_model(test::shipped("workloads", n));
    EXPECT_EQ(m.name, n);
    const OpGraph g = build_op_graph(m, m.training.micro_batch, m.training.dtype);
    EXPECT_GT(g.model_flops(), 0) << n;
  }
}

TEST(OpGraph, ParameterCountsMatchPublishedSizes) {
  // Published sizes: BERT-base 110M, BERT-large 340M, GPT-3 XL 1.3B, 2.7B, 6.7B, 175B, Llama-2 7B and 13B;
  // Llama 3 70B (70.6B, Meta's model card), Llama 3.1 405B; llama-140b is hetsim's stand-in for HETHUB's 140B model (dimensions chosen for 140B).
  const std::vector<std::pair<std::string, double>> published{
      {"bert-base", 110e6}, {"bert-large", 340e6}, {"gpt3-1.3b", 1.3e9}, {"gpt3-2.7b", 2.7e9},
      {"gpt3-6.7b", 6.7e9}, {"llama2-7b", 6.74e9}, {"llama2-13b", 13.0e9}, {"vgg19", 139.6e6}, {"vit", 85.6e6},
      {"gpt3-175b", 175e9}, {"llama-140b", 140e9}, {"llama3-70b", 70.6e9}, {"llama3.1-405b", 405e9}};
  for (const auto& [name, params] : published) {
    const ModelSpec m = load_model(test::shipped("workloads", name));
    const double p = build_op_graph(m, 1, m.training.dtype).params();
    EXPECT_NEAR(p / params, 1.0, 0.05) << name << ": " << p;
  }
}

TEST(OpGraph, GptIterationFlopsMatchSixPTPlusAttention) {
  for (const std::string name : {"gpt3-1.3b", "gpt3-2.7b", "gpt3-6.7b"}) {
    const ModelSpec m = load_model(test::shipped("workloads", name));
    const long mb = m.training.micro_batch;
    const OpGraph g = build_op_graph(m, mb, m.training.dtype);
    const double per_iteration = g.model_flops() * static_cast<double>(m.training.global_batch / mb);
    // Closed form: 6 * P * T for the weights plus 12 * L * s * h * T for attention scores and
    // context (forward 4*b*s^2*h per layer, tripled for backward), T = tokens per iteration.
    const double tokens = static_cast<double>(m.training.global_batch * m.seq_len);
    const double expect = 6 * g.params() * tokens +
                          12.0 * static_cast<double>(m.layers * m.seq_len * m.hidden) * tokens;
    EXPECT_NEAR(per_iteration / expect, 1.0, 0.02) << name;
  }
}

TEST(OpGraph, RecomputeKeepsOnlyLayerInputs) {
  ModelSpec m = load_model(test::shipped("workloads", "gpt3-1.3b"));
  const OpGraph plain = build_op_graph(m, 1, DType::kFp16);
  m.training.recompute = Recompute::kFull;
  const OpGraph rec = build_op_graph(m, 1, DType::kFp16);
  EXPECT_DOUBLE_EQ(rec.model_flops(), plain.model_flops());  // model FLOPs exclude recompute
  EXPECT_LT(rec.saved_bytes(), plain.saved_bytes() / 5);
  double recompute = 0;
  for (const Op& op : rec.ops) recompute += op.recompute_flops;
  EXPECT_GT(recompute, 0.3 * plain.model_flops() / 3);
}

double saved_of(const OpGraph& g, const std::string& name) {
  for (const Op& op : g.ops) {
    if (op.name == name) return op.saved_bytes;
  }
  return -1;
}

TEST(OpGraph, FlashAttentionKeepsNoScoresAndRecomputesThemInBackward) {
  ModelSpec m = load_model(test::shipped("workloads", "gpt3-1.3b"));
  m.training.attention = AttentionKernel::kAuto;
  const OpGraph unfused = build_op_graph(m, 2, DType::kFp16, KernelSupport{false});
  const OpGraph flash = build_op_graph(m, 2, DType::kFp16, KernelSupport{true});
  const double b = 2, s = 2048, h = 2048, a = 16;
  // Matrix-product FLOPs are the same (4bs^2h forward, twice that backward); flash repeats QK^T in
  // backward, and its softmax and dropout run inside the kernel (not counted as vector work).
  auto matmul_flops = [](const OpGraph& g) {
    double f = 0;
    for (const Op& op : g.ops) f += is_matmul(op.kind) ? op.fwd_flops + op.bwd_flops : 0;
    return f;
  };
  EXPECT_NEAR(matmul_flops(flash) / matmul_flops(unfused), 1, 1e-12);
  double extra = 0;
  for (const Op& op : flash.ops) extra += op.bwd_recompute_flops;
  EXPECT_DOUBLE_EQ(extra, m.layers * 2 * b * s * s * h);
  // Saved per layer: the unfused path keeps 5as^2b bytes of probabilities, mask and dropped
  // probabilities plus Q, K, V (6sbh); flash keeps Q, K, V and the fp32 log-sum-exp.
  const double unfused_attn = saved_of(unfused, "layer0.attn_scores") + saved_of(unfused, "layer0.softmax") +
                              saved_of(unfused, "layer0.attn_dropout") + saved_of(unfused, "layer0.attn_context");
  EXPECT_DOUBLE_EQ(unfused_attn, 5 * a * s * s * b + 6 * s * b * h);
  EXPECT_DOUBLE_EQ(saved_of(flash, "layer0.attention"), 6 * s * b * h + 4 * a * s * b);
  EXPECT_LT(saved_of(flash, "layer0.softmax"), 0);  // no such op
  m.training.attention = AttentionKernel::kStandard;  // never fused, even where the device could
  EXPECT_DOUBLE_EQ(build_op_graph(m, 2, DType::kFp16, KernelSupport{true}).saved_bytes(), unfused.saved_bytes());
}

TEST(OpGraph, CausalFlashAttentionComputesTheTilesOnAndBelowTheDiagonal) {
  // GPT at s = 2048: 16 x 16 tiles of 128, 136 computed; the kernel's time scales by 17/32, its
  // model FLOPs do not. BERT attends both ways: every tile.
  ModelSpec gpt = load_model(test::shipped("workloads", "gpt3-1.3b"));
  gpt.training.attention = AttentionKernel::kAuto;
  const OpGraph g = build_op_graph(gpt, 2, DType::kFp16, KernelSupport{true});
  const Op* attn = nullptr;
  for (const Op& op : g.ops) attn = op.name == "layer0.attention" ? &op : attn;
  ASSERT_NE(attn, nullptr);
  EXPECT_DOUBLE_EQ(attn->tile_fraction, 136.0 / 256.0);
  EXPECT_DOUBLE_EQ(attn->fwd_flops, 4.0 * 2 * 2048 * 2048 * 2048);
  // The cost model times it at that share of the full kernel (compute-bound at this size).
  const CalibrationScope raw("none");  // the kernel model alone
  const Device a100 = load_device(test::shipped("kernels_profile/devices", "A100-SXM4-80GB"));
  Op full = *attn;
  full.tile_fraction = 1;
  const CostModel cost;
  const double launch = a100.efficiency.kernel_launch_s;
  for (Pass pass : {Pass::kForward, Pass::kBackward}) {
    const double causal_s = cost.op_time(a100, *attn, DType::kFp16, pass).seconds - launch;
    const double full_s = cost.op_time(a100, full, DType::kFp16, pass).seconds - launch;
    EXPECT_NEAR(causal_s / full_s, 136.0 / 256.0, 1e-12);
  }
  ModelSpec bert = load_model(test::shipped("workloads", "bert-large"));
  bert.training.attention = AttentionKernel::kAuto;
  for (const Op& op : build_op_graph(bert, 2, DType::kFp16, KernelSupport{true}).ops) EXPECT_EQ(op.tile_fraction, 1) << op.name;
}

TEST(OpGraph, DropoutMasksAreOneBytePerElement) {
  ModelSpec m = load_model(test::shipped("workloads", "gpt3-1.3b"));
  m.training.attention = AttentionKernel::kStandard;
  const OpGraph with = build_op_graph(m, 1, DType::kFp16);
  m.training.dropout = 0;
  const OpGraph without = build_op_graph(m, 1, DType::kFp16);
  const double s = 2048, h = 2048, a = 16;
  // Per layer: 2 hidden masks (sbh) + attention mask (as^2) + the dropped probabilities (2as^2);
  // one embedding mask (sbh).
  EXPECT_DOUBLE_EQ(with.saved_bytes() - without.saved_bytes(), m.layers * (2 * s * h + 3 * a * s * s) + s * h);
  EXPECT_DOUBLE_EQ(with.model_flops() > without.model_flops(), true);
  EXPECT_EQ(with.ops.size(), without.ops.size() + m.layers + 1);  // attn_dropout per layer, embedding_dropout
}

TEST(OpGraph, AResidualAddsBackwardSumsTheForkedGradientsOnce) {
  // Backward, the add passes its gradient to both branches; autograd sums the two where the stream
  // forked: one add of 3 tensors (PyTorch's layers show two such adds per layer). With dropout,
  // Megatron's fused bias+dropout+add also runs the dropout's gradient (dy and the mask -> dx).
  ModelSpec m = load_model(test::shipped("workloads", "gpt3-1.3b"));
  const double n = 2.0 * m.seq_len * m.hidden, e = 2;  // micro-batch 2, fp16
  m.training.dropout = 0;
  const Op plain = test::op_named(build_op_graph(m, 2, DType::kFp16), "layer0.mlp_residual");
  EXPECT_DOUBLE_EQ(plain.fwd_bytes, 3 * n * e);
  EXPECT_DOUBLE_EQ(plain.bwd_bytes, 3 * n * e);
  EXPECT_DOUBLE_EQ(plain.bwd_flops, n);
  m.training.dropout = 0.1;
  const Op dropped = test::op_named(build_op_graph(m, 2, DType::kFp16), "layer0.mlp_residual");
  EXPECT_DOUBLE_EQ(dropped.fwd_bytes, 3 * n * e + n);
  EXPECT_DOUBLE_EQ(dropped.bwd_bytes, 3 * n * e + (2 * e + 1) * n);
  EXPECT_DOUBLE_EQ(dropped.saved_bytes, n);
  // A MoE layer's residual with shared experts sums three tensors: two gradient sums.
  const ModelSpec moe = load_model(test::shipped("workloads", "llama4-maverick"));
  const OpGraph g = build_op_graph(moe, 1, DType::kBf16);
  const double nm = static_cast<double>(moe.seq_len) * static_cast<double>(moe.hidden);
  int three = 0;
  for (const Op& op : g.ops) {
    if (op.kind != OpKind::kResidual || op.inputs.size() != 3) continue;
    ++three;
    EXPECT_DOUBLE_EQ(op.bwd_bytes, 2 * 3 * nm * 2) << op.name;
  }
  EXPECT_EQ(three, 24);  // its 24 MoE layers
}

TEST(OpGraph, ANormReadByRouterExpertsAndSharedExpertsOrByMlasTwoDownProjectionsSumsTheirGradients) {
  // Where one tensor feeds several ops, autograd adds their gradients (one add of 3 tensors per
  // further reader) before the backward of the op that produced it: the MoE block's norm output
  // (router, token permutation, shared experts) and MLA's attention norm (q_down, kv_down).
  const ModelSpec ds = load_model(test::shipped("workloads", "deepseek-v3"));
  const OpGraph g = build_op_graph(ds, 1, DType::kBf16);
  const double n = static_cast<double>(ds.seq_len) * static_cast<double>(ds.hidden), e = 2;
  // The same norm in a layer without the fork: layer 0 is dense (first_k_dense) with MLA,
  // the MoE layers' MLP norm is read three times (shared experts).
  const Op attn_norm = test::op_named(g, "layer0.attn_norm");
  const Op dense_mlp_norm = test::op_named(g, "layer0.mlp_norm");
  EXPECT_DOUBLE_EQ(attn_norm.bwd_bytes - dense_mlp_norm.bwd_bytes, 3 * n * e);
  EXPECT_DOUBLE_EQ(attn_norm.bwd_flops - dense_mlp_norm.bwd_flops, n);
  const int moe_layer = static_cast<int>(ds.layers) - 1;
  const Op moe_norm = test::op_named(g, "layer" + std::to_string(moe_layer) + ".mlp_norm");
  EXPECT_DOUBLE_EQ(moe_norm.bwd_bytes - dense_mlp_norm.bwd_bytes, 2 * 3 * n * e);
  // Without shared experts: router and permutation, one sum.
  const ModelSpec qwen = load_model(test::shipped("workloads", "qwen3-30b-a3b"));
  ASSERT_LE(qwen.moe->shared_ffn_hidden, 0);
  const OpGraph q = build_op_graph(qwen, 1, DType::kBf16);
  const double nq = static_cast<double>(qwen.seq_len) * static_cast<double>(qwen.hidden);
  EXPECT_DOUBLE_EQ(test::op_named(q, "layer0.mlp_norm").bwd_bytes - test::op_named(q, "layer0.attn_norm").bwd_bytes, 3 * nq * e);
}

TEST(OpGraph, TheLossCountsTheSixteenBitLogitsBesideItsFp32CopyOnlyBelowFp32) {
  ModelSpec m = load_model(test::shipped("workloads", "gpt3-1.3b"));
  for (const auto& [dtype, extra] : {std::pair{DType::kBf16, 2.0}, std::pair{DType::kFp32, 0.0}}) {
    const OpGraph g = build_op_graph(m, 2, dtype);
    const double rows = 2.0 * m.seq_len, v = static_cast<double>(m.vocab);
    bool seen = false;
    for (const Op& op : g.ops) {
      if (op.name != "loss") continue;
      seen = true;
      EXPECT_DOUBLE_EQ(op.saved_bytes, rows * v * (4 + extra)) << dtype_name(dtype);
    }
    EXPECT_TRUE(seen);
  }
}

TEST(OpGraph, BertMlmHeadRunsOnMaskedPositionsOnly) {
  ModelSpec m = load_model(test::shipped("workloads", "bert-large"));
  EXPECT_EQ(m.training.masked_positions, 77);  // round(0.15 x 512), DeepLearningExamples' 15 % masking
  const OpGraph g = build_op_graph(m, 4, DType::kFp16);
  const double rows = 4 * 77, h = 1024, v = 30522;
  for (const Op& op : g.ops) {
    if (op.name == "lm_head") {
      EXPECT_DOUBLE_EQ(op.fwd_flops, 2 * rows * h * v);
    } else if (op.name == "mlm_dense") {
      EXPECT_DOUBLE_EQ(op.fwd_flops, 2 * rows * h * h);
    } else if (op.name == "loss") {
      EXPECT_DOUBLE_EQ(op.saved_bytes, rows * v * (4 + 2));  // the fp32 softmax and the fp16 logits beside it
    } else if (op.name == "pooler") {
      EXPECT_DOUBLE_EQ(op.fwd_flops, 2 * 4 * h * h);  // first token of each sequence
    }
  }
  m.training.masked_positions = 512;  // every position: the old head
  double head = 0, head_all = 0;
  for (const Op& op : g.ops) head += op.layer == m.layers ? op.fwd_flops : 0;
  for (const Op& op : build_op_graph(m, 4, DType::kFp16).ops) head_all += op.layer == m.layers ? op.fwd_flops : 0;
  EXPECT_NEAR(head / head_all, 77.0 / 512, 0.01);
}

TEST(Model, TrainingDefaultsPerFamily) {
  EXPECT_DOUBLE_EQ(load_model(test::shipped("workloads", "gpt3-1.3b")).training.dropout, 0.1);
  EXPECT_DOUBLE_EQ(load_model(test::shipped("workloads", "bert-base")).training.dropout, 0.1);
  EXPECT_DOUBLE_EQ(load_model(test::shipped("workloads", "llama2-7b")).training.dropout, 0.0);
  EXPECT_EQ(load_model(test::shipped("workloads", "gpt3-1.3b")).training.attention, AttentionKernel::kAuto);
  EXPECT_EQ(load_model(test::shipped("workloads", "llama2-13b")).training.attention, AttentionKernel::kFlash);
}

}  // namespace
}  // namespace hetsim
