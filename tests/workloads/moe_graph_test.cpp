// File: tests/workloads/moe_graph_test.cpp
// Mixture-of-experts layers (moe:) and multi-head latent attention (mla:): the shipped MoE models
// against their published sizes, the operators' FLOPs and rows in closed form, and the BERT-MoE
// family (family: moe) unchanged.
#include <gtest/gtest.h>

#include "kernels_profile/calibration_profile.hpp"

#include <cmath>

#include "kernels_profile/cost_model.hpp"
#include "kernels_profile/device.hpp"
#include "test_support.hpp"
#include "workloads/op_graph.hpp"

namespace hetsim {
namespace {


bool has_op(const OpGraph& g, const std::string& name) {
  for (const Op& op : g.ops) {
    if (op.name == name) return true;
  }
  return false;
}

double embedding_params(const OpGraph& g) {
  double p = 0;
  for (const Op& op : g.ops) p += op.kind == OpKind::kEmbedding ? op.params : 0;
  return p;
}

double matmul_flops(const OpGraph& g) {
  double f = 0;
  for (const Op& op : g.ops) f += is_matmul(op.kind) ? op.fwd_flops + op.bwd_flops : 0;
  return f;
}

// A small llama model with a moe: block: 4 layers, h = 256, 8 experts of width 128, top-2.
ModelSpec small_moe(Family family = Family::kLlama) {
  ModelSpec m;
  m.name = "small-moe";
  m.family = family;
  m.layers = 4;
  m.hidden = 256;
  m.heads = 4;
  m.kv_heads = 4;
  m.ffn_hidden = 1024;
  m.seq_len = 64;
  m.vocab = 1000;
  m.tied_embeddings = false;
  m.training.global_batch = 8;
  m.training.micro_batch = 2;
  m.training.dtype = DType::kBf16;
  m.training.dropout = 0;
  MoeSpec moe;
  moe.experts = 8;
  moe.top_k = 2;
  moe.expert_ffn_hidden = 128;
  m.moe = moe;
  return m;
}

TEST(MoeModel, TotalParametersMatchPublished) {
  // Published totals: DeepSeek-V3 671B (the main model; its 14B MTP module is not part of the 671B
  // nor of hetsim's model), Qwen3-235B-A22B 235B, Qwen3-30B-A3B 30.5B, Mixtral 8x7B 46.7B, Llama 4
  // Maverick 400B (text model), GPT-OSS-120B 116.83B (its model card, arXiv 2508.10925). hetsim counts
  // every weight: embeddings, norms, routers. Within 1 %: the published figures are rounded (400B,
  // 235B), the norms and routers hetsim counts are below 0.01 % of any of them, and GPT-OSS's biases
  // and attention sinks (0.03 %) are left out.
  const std::vector<std::pair<std::string, double>> published{
      {"deepseek-v3", 671e9},    {"qwen3-235b-a22b", 235e9},  {"qwen3-30b-a3b", 30.5e9},
      {"mixtral-8x7b", 46.7e9}, {"llama4-maverick", 400e9}, {"gpt-oss-120b", 116.83e9}};
  for (const auto& [name, params] : published) {
    const ModelSpec m = load_model(test::shipped("workloads", name));
    ASSERT_TRUE(m.moe) << name;
    const OpGraph g = build_op_graph(m, 1, m.training.dtype);
    EXPECT_NEAR(g.params() / params, 1.0, 0.01) << name << ": " << g.params();
  }
}

TEST(MoeModel, ActiveParametersMatchPublished) {
  // Activated parameters per token. DeepSeek-V3 states 36.6B "including 0.9B for the output head"
  // (README_WEIGHTS.md), i.e. without the input embedding table; the others count every weight a
  // token touches (Qwen3 22B and 3.3B, Mixtral 12.9B, Maverick 17B). GPT-OSS-120B's model card counts
  // 5.13B without the embedding table (its attention 0.96B, MLP 114.71B of which 4 / 128 active,
  // embedding and unembedding 1.16B together). Within 3 %: those figures have two or three
  // significant digits.
  const std::vector<std::tuple<std::string, double, bool>> published{
      {"deepseek-v3", 36.6e9, false}, {"qwen3-235b-a22b", 22e9, true},   {"qwen3-30b-a3b", 3.3e9, true},
      {"mixtral-8x7b", 12.9e9, true}, {"llama4-maverick", 17e9, true}, {"gpt-oss-120b", 5.13e9, false}};
  for (const auto& [name, active, with_embedding] : published) {
    const ModelSpec m = load_model(test::shipped("workloads", name));
    const OpGraph g = build_op_graph(m, 1, m.training.dtype);
    const double counted = g.active_params() - (with_embedding ? 0 : embedding_params(g));
    EXPECT_NEAR(counted / active, 1.0, 0.03) << name << ": " << counted;
    // active = all - (1 - top_k / experts) x routed expert parameters
    double routed = 0;
    for (const Op& op : g.ops) routed += op.expert ? op.params : 0;
    const double share = static_cast<double>(m.moe->top_k) / static_cast<double>(m.moe->experts);
    EXPECT_NEAR(g.active_params() / (g.params() - (1 - share) * routed), 1.0, 1e-12) << name;
  }
}

// Weights each token multiplies (every GEMM's weights, routed experts k of E), from the model file's
// dimensions alone.
double active_matmul_params(const ModelSpec& m) {
  const double h = static_cast<double>(m.hidden), a = static_cast<double>(m.heads);
  double attention = 0;
  if (m.mla) {  // q_down + q_up (or q_proj), kv_down, kv_up, attn_out
    const double nope = static_cast<double>(m.mla->qk_nope_head_dim), rope = static_cast<double>(m.mla->qk_rope_head_dim);
    const double v = static_cast<double>(m.mla->v_head_dim), kv = static_cast<double>(m.mla->kv_lora_rank);
    const double q = m.mla->q_lora_rank ? static_cast<double>(*m.mla->q_lora_rank) : 0;
    attention = (q > 0 ? h * q + q * a * (nope + rope) : h * a * (nope + rope)) + h * (kv + rope) + kv * a * (nope + v) +
                a * v * h;
  } else {  // qkv (grouped K/V heads) + attn_out
    const double d = static_cast<double>(attention_head_dim(m)), kvh = static_cast<double>(m.kv_heads);
    attention = h * (a * d + 2 * kvh * d) + a * d * h;
  }
  const MoeSpec& moe = *m.moe;
  // SwiGLU MLPs: 3 h x width. MoE layer: router h x E, top_k experts, the shared MLP.
  const double dense = 3 * h * static_cast<double>(m.ffn_hidden);
  const double sparse = h * static_cast<double>(moe.experts) +
                        static_cast<double>(moe.top_k) * 3 * h * static_cast<double>(moe.expert_ffn_hidden) +
                        3 * h * static_cast<double>(moe.shared_ffn_hidden);
  double layers = 0;
  for (long l = 0; l < m.layers; ++l) layers += attention + (is_moe_layer(m, l) ? sparse : dense);
  return layers + h * static_cast<double>(m.vocab);  // + the LM head
}

TEST(MoeModel, ModelFlopsAreSixActiveParametersPerTokenPlusAttention) {
  for (const std::string name : {"deepseek-v3", "qwen3-235b-a22b", "qwen3-30b-a3b", "mixtral-8x7b", "llama4-maverick"}) {
    const ModelSpec m = load_model(test::shipped("workloads", name));
    const OpGraph g = build_op_graph(m, 1, m.training.dtype, KernelSupport{true});
    const double s = static_cast<double>(m.seq_len), a = static_cast<double>(m.heads);
    const double qk = m.mla ? static_cast<double>(m.mla->qk_nope_head_dim + m.mla->qk_rope_head_dim)
                            : static_cast<double>(attention_head_dim(m));
    const double v = m.mla ? static_cast<double>(m.mla->v_head_dim) : qk;
    // Matrix products of one sequence: 6 x active GEMM weights x s tokens (routed experts: only
    // the top_k a token reaches), plus scores and context 2·s²·a·(qk + v) forward, tripled with
    // backward, in every layer.
    const double expect = 6 * active_matmul_params(m) * s + 6 * s * s * a * (qk + v) * static_cast<double>(m.layers);
    EXPECT_NEAR(matmul_flops(g) / expect, 1.0, 1e-12) << name;
    // Norms, activations, routing and the loss add under 2 %.
    EXPECT_GT(g.model_flops(), expect);
    EXPECT_LT(g.model_flops(), 1.02 * expect) << name;
  }
}

TEST(MoeOps, MoeLayersFollowFirstDenseLayersAndEvery) {
  // DeepSeek-V3: layers 0-2 dense (ffn_hidden 18432), 3-60 MoE: 58 routers.
  const ModelSpec ds = load_model(test::shipped("workloads", "deepseek-v3"));
  const OpGraph g = build_op_graph(ds, 1, DType::kBf16);
  long routers = 0;
  for (const Op& op : g.ops) routers += op.name.ends_with(".router") ? 1 : 0;
  EXPECT_EQ(routers, 58);
  EXPECT_FALSE(is_moe_layer(ds, 2));
  EXPECT_TRUE(is_moe_layer(ds, 3));
  EXPECT_TRUE(has_op(g, "layer2.mlp_gate_up"));
  EXPECT_DOUBLE_EQ(test::op_named(g, "layer2.mlp_gate_up").params, 7168.0 * 2 * 18432);
  EXPECT_FALSE(has_op(g, "layer3.mlp_gate_up"));
  // Maverick: every: 2 makes layers 1, 3, ..., 47 MoE (Megatron's moe_layer_freq ([0,1]*24)).
  const ModelSpec mav = load_model(test::shipped("workloads", "llama4-maverick"));
  for (long l = 0; l < mav.layers; ++l) EXPECT_EQ(is_moe_layer(mav, l), l % 2 == 1) << l;
  // Dense models and the BERT-MoE family have no moe: block.
  EXPECT_FALSE(is_moe_layer(load_model(test::shipped("workloads", "llama2-7b")), 1));
  EXPECT_FALSE(is_moe_layer(load_model(test::shipped("workloads", "bert-moe")), 1));
}

TEST(MoeOps, LayerOperatorsInForwardOrder) {
  ModelSpec m = small_moe();
  m.moe->shared_experts = 2;
  m.moe->shared_ffn_hidden = 2 * 128;
  const OpGraph g = build_op_graph(m, 2, DType::kBf16);
  std::vector<std::string> names;
  for (const Op& op : g.ops) {
    if (op.layer == 1 && op.name.find("attn") == std::string::npos && op.name != "layer1.qkv" &&
        op.name != "layer1.attention" && op.name != "layer1.softmax") {
      names.push_back(op.name.substr(7));
    }
  }
  const std::vector<std::string> expect{"mlp_norm",   "router",        "router_topk", "moe_permute", "expert_fc1",
                                        "expert_act", "expert_fc2",    "moe_unpermute", "shared_fc1", "shared_act",
                                        "shared_fc2", "mlp_residual"};
  EXPECT_EQ(names, expect);
  EXPECT_EQ(test::op_named(g, "layer1.router").kind, OpKind::kLinear);
  EXPECT_EQ(test::op_named(g, "layer1.moe_permute").kind, OpKind::kMoeDispatch);
  EXPECT_EQ(test::op_named(g, "layer1.expert_fc1").kind, OpKind::kMoeExpert);
  EXPECT_EQ(test::op_named(g, "layer1.moe_unpermute").kind, OpKind::kMoeCombine);
  EXPECT_EQ(test::op_named(g, "layer1.shared_fc1").kind, OpKind::kLinear);
  for (const Op& op : g.ops) {
    const bool routed = op.name.ends_with("expert_fc1") || op.name.ends_with("expert_act") || op.name.ends_with("expert_fc2");
    EXPECT_EQ(op.expert, routed) << op.name;
  }
  // The residual adds the routed and the shared experts' outputs to the stream.
  EXPECT_EQ(test::op_named(g, "layer1.mlp_residual").inputs.size(), 3u);
}

TEST(MoeOps, DroplessExpertGemmsRunEveryRoutedToken) {
  const ModelSpec m = small_moe();
  const double b = 2, s = 64, h = 256, f = 128, E = 8, k = 2, T = b * s;
  const OpGraph g = build_op_graph(m, 2, DType::kBf16);
  const Op& fc1 = test::op_named(g, "layer0.expert_fc1");
  const Op& fc2 = test::op_named(g, "layer0.expert_fc2");
  // Rows per expert: T·k / E = 128·2/8 = 32; fc1 maps h to 2f (SwiGLU's gate and up).
  EXPECT_EQ(fc1.gemm, (GemmShape{8, 32, 256, 256}));
  EXPECT_EQ(fc2.gemm, (GemmShape{8, 32, 256, 128}));
  // FLOPs: 2·T·k·in·out forward, twice that backward; parameters: all E experts.
  EXPECT_DOUBLE_EQ(fc1.fwd_flops, 2 * T * k * h * 2 * f);
  EXPECT_DOUBLE_EQ(fc1.bwd_flops, 4 * T * k * h * 2 * f);
  EXPECT_DOUBLE_EQ(fc2.fwd_flops, 2 * T * k * f * h);
  EXPECT_DOUBLE_EQ(fc1.params, E * h * 2 * f);
  EXPECT_DOUBLE_EQ(fc2.params, E * f * h);
  EXPECT_DOUBLE_EQ(fc1.tile_fraction, 1);
  // Bytes: T·k rows in (h) and out (2f) and every expert's weights, in bf16.
  EXPECT_DOUBLE_EQ(fc1.fwd_bytes, (T * k * h + E * h * 2 * f + T * k * 2 * f) * 2);
  EXPECT_DOUBLE_EQ(fc1.saved_bytes, T * k * h * 2);
  // Router h -> E. The routing probabilities weight the activation (Megatron-Core's weighted
  // SwiGLU): 8 + 1 FLOPs per element of the T·k rows of f, the probabilities (fp32) kept with the
  // input (2f); unpermute then only sums: 1 FLOP per routed element, nothing kept.
  EXPECT_DOUBLE_EQ(test::op_named(g, "layer0.router").params, h * E);
  const Op& act = test::op_named(g, "layer0.expert_act");
  EXPECT_DOUBLE_EQ(act.fwd_flops, 9 * T * k * f);
  EXPECT_DOUBLE_EQ(act.saved_bytes, T * k * 2 * f * 2 + T * k * 4);
  const Op& unpermute = test::op_named(g, "layer0.moe_unpermute");
  EXPECT_DOUBLE_EQ(unpermute.fwd_flops, T * k * h);
  EXPECT_DOUBLE_EQ(unpermute.saved_bytes, 0);
  EXPECT_DOUBLE_EQ(g.routed_share, k / E);
  // Rows not divisible by the experts: T·k = 1·64·3 = 192 copies over 10 experts, 19.2 each: the
  // GEMM's mean rows round up to 20 while its FLOPs stay exact.
  ModelSpec odd = small_moe();
  odd.moe->experts = 10;
  odd.moe->top_k = 3;
  const Op& o = test::op_named(build_op_graph(odd, 1, DType::kBf16), "layer0.expert_fc2");
  EXPECT_EQ(o.gemm.m, 20);  // ceil(192 / 10)
  EXPECT_DOUBLE_EQ(o.fwd_flops, 2 * 64 * 3 * f * h);
}

TEST(MoeOps, CapacityFactorPadsExpertRowsWithoutCountingThePadding) {
  ModelSpec m = small_moe();
  m.moe->capacity_factor = 1.25;
  const double h = 256, f = 128, E = 8, routed = 2 * 64 * 2;
  const OpGraph g = build_op_graph(m, 2, DType::kBf16);
  const Op& fc1 = test::op_named(g, "layer0.expert_fc1");
  // Capacity: ceil(T·k / E x 1.25) = ceil(32 x 1.25) = 40 rows per expert, 320 executed.
  EXPECT_EQ(fc1.gemm.m, 40);
  EXPECT_EQ(expert_rows(*m.moe, routed), 40);
  // Model FLOPs count the 256 routed rows; the kernel runs 320 (time share 320 / 256).
  EXPECT_DOUBLE_EQ(fc1.fwd_flops, 2 * routed * h * 2 * f);
  EXPECT_DOUBLE_EQ(fc1.tile_fraction, 320.0 / 256.0);
  EXPECT_DOUBLE_EQ(fc1.fwd_bytes, (320 * h + E * h * 2 * f + 320 * 2 * f) * 2);
  EXPECT_DOUBLE_EQ(test::op_named(g, "layer0.moe_permute").fwd_bytes, (128 * h + 320 * h) * 2 + routed * 4);
  // The cost model runs the padding: 1.25 x the dropless kernel's time where compute-bound.
  const CalibrationScope raw("none");  // the kernel model alone
  const Device a100 = load_device(test::shipped("kernels_profile/devices", "A100-SXM4-80GB"));
  Op big = fc1;
  big.gemm.m *= 64;
  big.fwd_flops *= 64;
  big.bwd_flops *= 64;
  Op dropless = big;
  dropless.tile_fraction = 1;
  const CostModel roofline;
  const double launch = a100.efficiency.kernel_launch_s;
  for (Pass pass : {Pass::kForward, Pass::kBackward}) {
    const double padded_s = roofline.op_time(a100, big, DType::kBf16, pass).seconds - launch;
    const double plain_s = roofline.op_time(a100, dropless, DType::kBf16, pass).seconds - launch;
    EXPECT_NEAR(padded_s / plain_s, 1.25, 1e-12);
  }
  // Capacity 0.5: 16 rows per expert, 128 of the 256 routed copies dropped; only those run count.
  m.moe->capacity_factor = 0.5;
  const Op& dropped = test::op_named(build_op_graph(m, 2, DType::kBf16), "layer0.expert_fc1");
  EXPECT_EQ(dropped.gemm.m, 16);
  EXPECT_DOUBLE_EQ(dropped.fwd_flops, 2 * 128 * h * 2 * f);
  EXPECT_DOUBLE_EQ(dropped.tile_fraction, 1);
}

TEST(MoeOps, SharedExpertsDefaultToSharedExpertsTimesExpertWidth) {
  const ModelSpec ds = load_model(test::shipped("workloads", "deepseek-v3"));
  EXPECT_EQ(ds.moe->shared_ffn_hidden, 2048);  // 1 shared expert x 2048
  const OpGraph g = build_op_graph(ds, 1, DType::kBf16);
  EXPECT_DOUBLE_EQ(test::op_named(g, "layer3.shared_fc1").params, 7168.0 * 2 * 2048);
  EXPECT_DOUBLE_EQ(test::op_named(g, "layer3.shared_fc2").params, 2048.0 * 7168);
  // Qwen3 has none: no shared ops, the residual adds the routed output only.
  const OpGraph q = build_op_graph(load_model(test::shipped("workloads", "qwen3-30b-a3b")), 1, DType::kBf16);
  EXPECT_FALSE(has_op(q, "layer0.shared_fc1"));
  EXPECT_EQ(test::op_named(q, "layer0.mlp_residual").inputs.size(), 2u);
}

TEST(MoeOps, GptExpertsUseGeluWithBiases) {
  const ModelSpec m = small_moe(Family::kGpt);
  const OpGraph g = build_op_graph(m, 1, DType::kBf16);
  // fc1 h -> f with a bias per expert: E x (h·f + f).
  EXPECT_DOUBLE_EQ(test::op_named(g, "layer0.expert_fc1").params, 8 * (256.0 * 128 + 128));
  EXPECT_EQ(test::op_named(g, "layer0.expert_fc1").gemm.n, 128);
  EXPECT_EQ(test::op_named(g, "layer0.expert_act").shape, (std::vector<long>{8, 16, 128}));
}

TEST(MoeOps, EagerKernelsSumTheBiasGradientsOfBiasedLayersButNotOfTheRoutedExperts) {
  ModelSpec m = small_moe(Family::kGpt);
  m.moe->shared_experts = 1;
  m.moe->shared_ffn_hidden = 128;
  m.training.kernels = TrainingKernels::kEager;
  const OpGraph g = build_op_graph(m, 1, DType::kBf16);
  EXPECT_TRUE(test::op_named(g, "layer0.shared_fc1").eager_bias_grad);  // a plain linear layer with a bias
  EXPECT_TRUE(test::op_named(g, "layer0.qkv").eager_bias_grad);
  EXPECT_EQ(test::op_named(g, "layer0.qkv").eager_views, 3);
  EXPECT_FALSE(test::op_named(g, "layer0.expert_fc1").eager_bias_grad);  // grouped GEMMs: left fused
}

TEST(Model, MoeBlockDefaults) {
  const ModelSpec q = load_model(test::shipped("workloads", "qwen3-30b-a3b"));
  ASSERT_TRUE(q.moe);
  EXPECT_EQ(q.moe->shared_experts, 0);
  EXPECT_EQ(q.moe->shared_ffn_hidden, 0);
  EXPECT_EQ(q.moe->first_dense_layers, 0);
  EXPECT_EQ(q.moe->every, 1);
  EXPECT_FALSE(q.moe->capacity_factor);
  EXPECT_EQ(q.moe->router_imbalance, 1.0);
  EXPECT_EQ(attention_head_dim(q), 128);
  EXPECT_FALSE(load_model(test::shipped("workloads", "gpt3-1.3b")).moe);
}

TEST(OpGraph, HeadDimWiderThanHiddenOverHeads) {
  // Qwen3-30B-A3B: 32 heads of 128 (4096) over hidden 2048, 4 K/V heads.
  const ModelSpec m = load_model(test::shipped("workloads", "qwen3-30b-a3b"));
  const OpGraph g = build_op_graph(m, 1, DType::kBf16, KernelSupport{true});
  const double h = 2048, s = 4096;
  // qkv: h -> 32·128 + 2·4·128; attn_out: 32·128 -> h; attention 2·s²·32·(128 + 128) forward.
  EXPECT_DOUBLE_EQ(test::op_named(g, "layer0.qkv").params, h * (4096 + 1024));
  EXPECT_DOUBLE_EQ(test::op_named(g, "layer0.attn_out").params, 4096 * h);
  EXPECT_DOUBLE_EQ(test::op_named(g, "layer0.attention").fwd_flops, 2 * s * s * 32 * 256);
}

TEST(Mla, ProjectionsAndAttentionOfDeepSeekV3) {
  const ModelSpec m = load_model(test::shipped("workloads", "deepseek-v3"));
  const double h = 7168, a = 128, ql = 1536, kvl = 512, nope = 128, rope = 64, v = 128, s = 4096;
  const OpGraph g = build_op_graph(m, 1, DType::kBf16, KernelSupport{true});
  EXPECT_DOUBLE_EQ(test::op_named(g, "layer0.q_down").params, h * ql);
  EXPECT_DOUBLE_EQ(test::op_named(g, "layer0.q_norm").params, ql);  // RMSNorm scale
  EXPECT_DOUBLE_EQ(test::op_named(g, "layer0.q_up").params, ql * a * (nope + rope));
  EXPECT_DOUBLE_EQ(test::op_named(g, "layer0.kv_down").params, h * (kvl + rope));
  EXPECT_DOUBLE_EQ(test::op_named(g, "layer0.kv_norm").params, kvl);
  EXPECT_DOUBLE_EQ(test::op_named(g, "layer0.kv_up").params, kvl * a * (nope + v));
  EXPECT_DOUBLE_EQ(test::op_named(g, "layer0.attn_out").params, a * v * h);
  // kv_down reads the same normalised input as q_down, which keeps it: kept once.
  EXPECT_DOUBLE_EQ(test::op_named(g, "layer0.kv_down").saved_bytes, 0);
  EXPECT_DOUBLE_EQ(test::op_named(g, "layer0.q_down").saved_bytes, s * h * 2);
  // Flash: scores with 192-wide heads, context with 128-wide values: 2·s²·a·(192 + 128) forward.
  const Op& attn = test::op_named(g, "layer0.attention");
  EXPECT_DOUBLE_EQ(attn.fwd_flops, 2 * s * s * a * (nope + rope + v));
  EXPECT_DOUBLE_EQ(attn.bwd_recompute_flops, 2 * s * s * a * (nope + rope));
  EXPECT_EQ(attn.gemm, (GemmShape{128, 4096, 4096, 192}));
  // Unfused: QK^T over 192, PV over 128.
  ModelSpec standard = m;
  standard.training.attention = AttentionKernel::kStandard;
  const OpGraph u = build_op_graph(standard, 1, DType::kBf16, KernelSupport{true});
  EXPECT_DOUBLE_EQ(test::op_named(u, "layer0.attn_scores").fwd_flops, 2 * s * s * a * (nope + rope));
  EXPECT_DOUBLE_EQ(test::op_named(u, "layer0.attn_context").fwd_flops, 2 * s * s * a * v);
  EXPECT_EQ(test::op_named(u, "layer0.attn_context").shape, (std::vector<long>{1, 4096, 128 * 128}));
  // Without a query latent (V2-Lite): one q projection h -> a·(nope + rope).
  ModelSpec lite = m;
  lite.mla->q_lora_rank.reset();
  const OpGraph l = build_op_graph(lite, 1, DType::kBf16);
  EXPECT_FALSE(has_op(l, "layer0.q_down"));
  EXPECT_DOUBLE_EQ(test::op_named(l, "layer0.q_proj").params, h * a * (nope + rope));
}

TEST(OpGraph, BertMoeFamilyGraphUnchanged) {
  // The BERT-MoE family (family: moe, HAP's model) as built before moe: blocks existed, at
  // micro-batch 2 on 8 devices (16 experts) and 1 device (2 experts), unfused and flash. Since
  // 2026-12-04 each of the 24 residual adds' backward also sums the two gradients where the stream
  // forked (3 x 2·128·768 fp32 elements: +2 359 296 bytes) and counts 2 FLOPs per element, not 6;
  // and each of the 6 MoE layers' norm output, read by the gate and the dispatch, sums their two
  // gradients (+2 359 296 bytes and 196 608 FLOPs each).
  struct Expect {
    int devices;
    bool flash;
    size_t ops;
    double params, flops, saved, fwd_bytes, bwd_bytes;
  };
  const std::vector<Expect> before{
      {8, false, 186, 534873602, 314582110816, 402469504, 3040317312, 5929368064},
      {8, true, 150, 534873602, 314497176160, 360149632, 2922499968, 5754927616},
      {1, false, 186, 138124802, 314483020384, 402469504, 1454526336, 2757786112},
      {1, true, 150, 138124802, 314398085728, 360149632, 1336708992, 2583345664}};
  for (const Expect& e : before) {
    ModelSpec m = load_model(test::shipped("workloads", "bert-moe"));
    resolve_experts(m, e.devices);
    const OpGraph g = build_op_graph(m, 2, m.training.dtype, KernelSupport{e.flash});
    double fwd_bytes = 0, bwd_bytes = 0;
    for (const Op& op : g.ops) {
      fwd_bytes += op.fwd_bytes;
      bwd_bytes += op.bwd_bytes;
      EXPECT_FALSE(op.expert) << op.name;
    }
    EXPECT_EQ(g.ops.size(), e.ops);
    EXPECT_DOUBLE_EQ(g.params(), e.params);
    EXPECT_DOUBLE_EQ(g.active_params(), e.params);
    EXPECT_DOUBLE_EQ(g.model_flops(), e.flops);
    EXPECT_DOUBLE_EQ(g.saved_bytes(), e.saved);
    EXPECT_DOUBLE_EQ(fwd_bytes, e.fwd_bytes);
    EXPECT_DOUBLE_EQ(bwd_bytes, e.bwd_bytes);
  }
}

}  // namespace
}  // namespace hetsim
