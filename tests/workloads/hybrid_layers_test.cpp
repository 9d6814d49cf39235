// File: tests/workloads/hybrid_layers_test.cpp
// Hybrid Mamba-Transformer models (hybrid_pattern, the mamba: block, mlp_activation): the shipped
// Nemotron 3 Nano against its published sizes, the Mamba mixer's operators in closed form and under
// tensor parallelism, what the model reader refuses, and the error bar a Mamba model is not given.
#include <gtest/gtest.h>

#include <string>

#include "kernels_profile/calibration_profile.hpp"
#include "kernels_profile/cost_model.hpp"
#include "kernels_profile/device.hpp"
#include "planner/hybrid/hybrid_plan.hpp"
#include "planner/hybrid/op_shard.hpp"
#include "studies/validation/calibration.hpp"
#include "studies/validation/error_bars.hpp"
#include "test_support.hpp"
#include "workloads/op_graph.hpp"

namespace hetsim {
namespace {

int count_ops(const OpGraph& g, OpKind kind) {
  int n = 0;
  for (const Op& op : g.ops) n += op.kind == kind ? 1 : 0;
  return n;
}

TEST(HybridLayers, NemotronThreeNanoHasItsPublishedSizesAndLayers) {
  // Published: 31.6B parameters, 3.2B active per token without the input embedding (3.6B with it).
  const ModelSpec m = load_model(test::shipped("workloads", "nemotron-3-nano"));
  ASSERT_TRUE(m.mamba);
  EXPECT_EQ(m.mamba->conv_kernel, 4);  // Megatron-Core's defaults where the file is silent
  EXPECT_EQ(m.mamba->chunk_size, 128);
  EXPECT_EQ(mlp_activation_of(m), MlpActivation::kRelu2);
  const OpGraph g = build_op_graph(m, 1, m.training.dtype);
  EXPECT_NEAR(g.params() / 31.6e9, 1.0, 0.01) << g.params();
  double input_embedding = 0;
  for (const Op& op : g.ops) input_embedding += op.name == "embedding" ? op.params : 0;
  EXPECT_NEAR((g.active_params() - input_embedding) / 3.2e9, 1.0, 0.03) << g.active_params();
  EXPECT_NEAR(g.active_params() / 3.6e9, 1.0, 0.03);
  // 23 Mamba layers, 6 attention layers (unfused here: no device named), 23 MoE layers, as the pattern says.
  EXPECT_EQ(count_ops(g, OpKind::kSsmScan), 23);
  EXPECT_EQ(count_ops(g, OpKind::kAttnScores), 6);
  int moe_layers = 0;
  for (long l = 0; l < m.layers; ++l) moe_layers += is_moe_layer(m, l) ? 1 : 0;
  EXPECT_EQ(moe_layers, 23);
  EXPECT_EQ(layer_kind(m, 0), 'M');
  EXPECT_EQ(layer_kind(m, 5), '*');
  EXPECT_TRUE(is_moe_layer(m, 1));
  EXPECT_FALSE(is_moe_layer(m, 0));
  // Squared-ReLU experts are ungated: fc1 maps h to the expert width, not twice it.
  const Op fc1 = test::op_named(g, "layer1.expert_fc1");
  EXPECT_EQ(fc1.gemm.n, m.moe->expert_ffn_hidden);
  // relu(x)^2 (2 FLOPs an element) and the routing weight's product (1), over every expert's rows.
  EXPECT_EQ(test::op_named(g, "layer1.expert_act").fwd_flops, 3 * static_cast<double>(fc1.gemm.m) * fc1.gemm.n * fc1.gemm.batch);
}

TEST(HybridLayers, NemotronH56bHasItsPublishedSizeAndUngatedMlps) {
  // Published: 56B (Nemotron-H, arXiv 2504.03624). 54 Mamba, 54 MLP and 10 attention layers.
  const ModelSpec m = load_model(test::shipped("workloads", "nemotron-h-56b"));
  const OpGraph g = build_op_graph(m, 1, m.training.dtype);
  EXPECT_NEAR(g.params() / 56e9, 1.0, 0.01) << g.params();
  EXPECT_EQ(count_ops(g, OpKind::kSsmScan), 54);
  EXPECT_EQ(count_ops(g, OpKind::kAttnScores), 10);
  EXPECT_FALSE(m.moe);
  // A squared-ReLU MLP layer: mlp_up (h to ffn, no gate, no bias: llama family), relu2, mlp_down.
  const Op up = test::op_named(g, "layer1.mlp_up");
  EXPECT_EQ(up.gemm.n, m.ffn_hidden);
  EXPECT_DOUBLE_EQ(up.params, static_cast<double>(m.hidden) * static_cast<double>(m.ffn_hidden));
  EXPECT_EQ(test::op_named(g, "layer1.relu2").kind, OpKind::kActivation);
  EXPECT_EQ(layer_kind(m, 1), '-');
  EXPECT_EQ(layer_kind(m, 7), '*');
}

TEST(HybridLayers, TheMixerIsInProjectionScanNormOutProjectionInClosedForm) {
  const ModelSpec m = load_model(test::shipped("workloads", "nemotron-3-nano"));
  const OpGraph g = build_op_graph(m, 2, m.training.dtype);
  const double t = 2.0 * 8192, h = 2688, inner = 64 * 64, gn = 8 * 128;
  const Op in = test::op_named(g, "layer0.mamba_in");
  EXPECT_EQ(in.kind, OpKind::kLinear);
  EXPECT_DOUBLE_EQ(in.params, h * (2 * inner + 2 * gn + 64));  // z, x, B, C, dt; no bias
  const Op scan = test::op_named(g, "layer0.ssm_scan");
  // conv (2 x 4 taps over x, B, C), C·Bᵀ per group, the intra-chunk product and the states per head,
  // the gate and skip: per token.
  const double flops = 2 * 4 * (inner + 2 * gn) + 2 * 128.0 * 8 * 128 + 64 * (2 * 128.0 * 64 + 4 * 128.0 * 64) + 7 * inner;
  EXPECT_DOUBLE_EQ(scan.fwd_flops, t * flops);
  EXPECT_DOUBLE_EQ(scan.params, (inner + 2 * gn) * 5 + 3 * 64);  // conv weights and bias; dt_bias, A_log, D
  EXPECT_DOUBLE_EQ(scan.saved_bytes, t * (2 * inner + 2 * gn + 64) * 2);  // the in_proj output, bf16
  EXPECT_EQ(test::op_named(g, "layer0.mamba_out_norm").kind, OpKind::kRmsNorm);
  EXPECT_DOUBLE_EQ(test::op_named(g, "layer0.mamba_out").params, inner * h);
  // One residual per layer: the Mamba layer's adds the mixer's output to the layer's input.
  EXPECT_EQ(test::op_named(g, "layer0.mamba_residual").inputs.size(), 2u);
}

TEST(HybridLayers, TensorParallelismSplitsTheMixerByHeadsAsMegatronDoes) {
  const ModelSpec m = load_model(test::shipped("workloads", "nemotron-3-nano"));
  const OpGraph g = build_op_graph(m, 1, m.training.dtype);
  EXPECT_EQ(megatron_split(test::op_named(g, "layer0.mamba_in"), true), TpSplit::kColumn);
  EXPECT_EQ(megatron_split(test::op_named(g, "layer0.mamba_out"), true), TpSplit::kRow);
  EXPECT_EQ(megatron_split(test::op_named(g, "layer0.ssm_scan"), false), TpSplit::kSharded);
  // The group norm is over the inner width, which TP splits, with or without sequence parallelism.
  EXPECT_EQ(megatron_split(test::op_named(g, "layer0.mamba_out_norm"), false), TpSplit::kSharded);
  EXPECT_EQ(megatron_split(test::op_named(g, "layer0.mamba_norm"), false), TpSplit::kReplicated);
  const Op scan = test::op_named(g, "layer0.ssm_scan");
  const Op half = tp_shard(scan, TpSplit::kSharded, 2, false);
  EXPECT_DOUBLE_EQ(half.fwd_flops, scan.fwd_flops / 2);
  EXPECT_DOUBLE_EQ(half.saved_bytes, scan.saved_bytes / 2);
}

TEST(HybridLayers, APlanSplittingTheMixerUnevenlyOrOverContextRanksIsRefused) {
  // Megatron's MambaMixer asserts that TP divides the groups and heads; context parallelism of Mamba
  // layers is not modelled. Eight kv heads here, so that only the mixer's rule refuses TP 4.
  ModelSpec m = load_model(test::shipped("workloads", "nemotron-3-nano"));
  m.kv_heads = 8;
  m.mamba->groups = 2;
  m.training.global_batch = 8;
  const Cluster c = load_cluster(test::source_dir() / "studies/validation/clusters/dgx-h100-1.yaml");
  const auto plan = [&](int tp, int cp) {
    HybridPlan p;
    p.micro_batch = 4;  // shared by the stage's data-parallel copies (2 or 4)
    p.gradient_sync = GradientSync::kZero1;
    PipelinePlan pl;
    pl.micro_batches = 2;
    StagePlan st;
    st.tp = tp;
    st.cp = cp;
    for (int d = 0; d < 8; ++d) st.devices.push_back(d);
    st.chunks = {{0, static_cast<int>(m.layers) - 1}};
    pl.stages.push_back(st);
    p.pipelines.push_back(pl);
    return p;
  };
  const auto messages = [&](const HybridPlan& p) {
    std::string all;
    for (const PlanProblem& q : check_hybrid_plan(p, m, c)) all += q.field + ": " + q.message + "\n";
    return all;
  };
  EXPECT_EQ(messages(plan(2, 1)), "");
  EXPECT_NE(messages(plan(4, 1)).find("tp 4 does not divide the Mamba mixers' 2 groups and 64 heads"), std::string::npos)
      << messages(plan(4, 1));
  EXPECT_NE(messages(plan(2, 2)).find("context parallelism of Mamba layers"), std::string::npos) << messages(plan(2, 2));
}

TEST(HybridLayers, TheScanIsCostedOnTheRooflineAsAnEstimate) {
  const ModelSpec m = load_model(test::shipped("workloads", "nemotron-3-nano"));
  use_no_calibration();  // the raw model; the shipped profile's share is checked last
  const Device h100 = load_device(test::source_dir() / "kernels_profile/devices/H100-SXM5-80GB.yaml");
  use_shipped_calibrations();
  const Device calibrated = load_device(test::source_dir() / "kernels_profile/devices/H100-SXM5-80GB.yaml");
  const CostModel cost = CostModel::shipped();
  const Op one = test::op_named(build_op_graph(m, 1, DType::kBf16), "layer0.ssm_scan");
  const Op four = test::op_named(build_op_graph(m, 4, DType::kBf16), "layer0.ssm_scan");
  const OpCost a = cost.op_time(h100, one, DType::kBf16, Pass::kForward);
  const OpCost b = cost.op_time(h100, four, DType::kBf16, Pass::kForward);
  EXPECT_GT(a.by_source[static_cast<size_t>(CostSource::kRoofline)], 0.99 * a.seconds);  // no measured rows
  // Bound by its traffic at these widths: four times the tokens, four times the time but for the six
  // kernels' launches.
  ASSERT_EQ(h100.slowdown, 1.0);  // the device file alone: no calibration profile's share on top
  ASSERT_EQ(h100.fitted.memory_bound_time_excess, 0.0);
  const double launches = 6 * h100.efficiency.kernel_launch_s;
  const double ra = a.seconds, rb = b.seconds;
  EXPECT_NEAR((rb - launches) / (ra - launches), 4.0, 1e-9);
  const double bw = h100.memory_bandwidth_Bps * h100.efficiency.memory;
  EXPECT_NEAR(ra - launches, one.fwd_bytes / bw, 1e-12);
  EXPECT_GT(cost.op_time(h100, one, DType::kBf16, Pass::kBackward).seconds, 2 * a.seconds);
  // megatron-core-2026 lengthens it by its fitted ssm_scan_time_excess, said as calibrated.
  const double excess = calibrated.fitted.ssm_scan_time_excess;
  ASSERT_GT(excess, 0.5);
  ASSERT_EQ(calibrated.fitted.memory_bound_time_excess, 0.0);
  const OpCost c = cost.op_time(calibrated, one, DType::kBf16, Pass::kForward);
  EXPECT_NEAR(c.seconds, (1 + excess) * a.seconds, 1e-12);
  EXPECT_NEAR(c.by_source[static_cast<size_t>(CostSource::kCalibrated)], excess * a.seconds, 1e-12);
}

TEST(HybridLayers, BadHybridModelsAreRefusedAtTheirField) {
  // Each block on line 9 of a 4-layer model (test::expect_model_blocks_refused).
  test::expect_model_blocks_refused({
      {"llama", "hybrid_pattern: \"MM*X\"\nmamba: {heads: 8}\n", "character 'X' at position 3"},
      {"llama", "hybrid_pattern: \"MM*\"\nmamba: {heads: 8}\n", "3 characters for the model's 4 layers"},
      {"llama", "hybrid_pattern: \"MM*-\"\n", "has Mamba layers (M) but the model has no mamba: block"},
      {"llama", "mamba: {heads: 8}\n", "a mamba: block needs hybrid_pattern"},
      {"llama", "mamba: {heads: 8}\nhybrid_pattern: \"**--\"\n", "no layer of hybrid_pattern is a Mamba layer"},
      {"llama", "hybrid_pattern: \"M*E-\"\nmamba: {heads: 8}\n", "has MoE layers (E) but the model has no moe: block"},
      {"llama", "moe: {experts: 8, top_k: 2, expert_ffn_hidden: 64, every: 2}\nhybrid_pattern: \"M*E-\"\nmamba: {heads: 8}\n",
       "the pattern places the MoE layers"},
      {"llama", "mamba: {heads: 6, groups: 4}\nhybrid_pattern: \"MM*-\"\n", "4 does not divide the 6 SSM heads"},
      {"llama", "mamba: {head_dim: 96}\nhybrid_pattern: \"MM*-\"\n", "does not divide 2 x hidden = 512"},
      {"llama", "mlp_activation: relu3\n", "mlp_activation"},
      {"llama", "mlp_activation: relu2\nmoe: {experts: 8, top_k: 2, expert_ffn_hidden: 64, glu_clamp: 7}\n", "glu_clamp"},
      {"bert", "hybrid_pattern: \"MM*-\"\n", "not bert"},
      {"bert", "mlp_activation: relu2\n", "mlp_activation is for gpt and llama"},
  });
}

TEST(HybridLayers, AMambaModelTakesItsTimeErrorBarFromHybridRunsOnly) {
  // On H100 and B300 the hybrid rows' classes (Nemotron 3 Nano's); on A100, where no hybrid model ran,
  // none, though transformer classes cover it.
  use_shipped_calibrations();
  const ModelSpec m = load_model(test::shipped("workloads", "nemotron-3-nano"));
  for (const std::string gpu : {"H100-SXM5-80GB", "B300"}) {
    const std::string bar = training_time_error_bar({gpu}, 16, 2, m);
    EXPECT_NE(bar.find("hybrid"), std::string::npos) << bar;
  }
  const std::string bar = training_time_error_bar({"A100-SXM4-80GB"}, 16, 2, m);
  EXPECT_NE(bar.find("no calibration for this setting (Mamba layers"), std::string::npos) << bar;
  ModelSpec dense = m;  // the same model without its Mamba layers is a MoE transformer with a bar
  dense.mamba.reset();
  dense.hybrid_pattern.clear();
  for (const std::string gpu : {"H100-SXM5-80GB", "A100-SXM4-80GB"}) {
    const std::string bar = training_time_error_bar({gpu}, 16, 2, dense);
    EXPECT_EQ(bar.find("Mamba"), std::string::npos) << bar;
    EXPECT_EQ(bar.find("hybrid"), std::string::npos) << bar;
  }
}

TEST(HybridLayers, AHybridModelsClassSpeaksForNoOtherModel) {
  // The held-out Nemotron 3 Nano rows form classes of MoE MXFP8 runs on GB300 (and others): a Qwen3
  // MoE plan there must not take their bar, nor say it has none because of them.
  CalibrationClass nano;
  nano.name = "Megatron-Core GB300 hybrid MoE MXFP8 (held out)";
  nano.quantity = Quantity::kTime;
  nano.kind = RunKind::kTraining;
  nano.gpus = {"GB300"};
  nano.scope = "1 node";
  nano.rows = 1;
  nano.moe = nano.low_precision_gemms = nano.mamba = true;
  nano.p90_abs_error = nano.max_abs_error = nano.mean_abs_error = 0.393;
  const std::vector<CalibrationClass> only_nano{nano};
  EXPECT_FALSE(nearest_error_bar(only_nano, Quantity::kTime, RunKind::kTraining, {"GB300"}, "1 node", true, true, false, {}, "mxfp8"));
  // A dense plan there is not told that its GPU's rows are of MoE runs only: no rows speak for it.
  EXPECT_EQ(missing_error_bar_text(only_nano, Quantity::kTime, RunKind::kTraining, {"GB300"}, false),
            "no calibration for these GPU types in training runs");
  // A hybrid plan there takes it.
  EXPECT_TRUE(nearest_error_bar(only_nano, Quantity::kTime, RunKind::kTraining, {"GB300"}, "1 node", true, true, false, {}, "mxfp8", true));
  nano.mamba = false;  // the same class of a transformer's rows is taken, and not for a hybrid plan
  EXPECT_TRUE(nearest_error_bar({nano}, Quantity::kTime, RunKind::kTraining, {"GB300"}, "1 node", true, true, false, {}, "mxfp8"));
  EXPECT_FALSE(nearest_error_bar({nano}, Quantity::kTime, RunKind::kTraining, {"GB300"}, "1 node", true, true, false, {}, "mxfp8", true));
}

}  // namespace
}  // namespace hetsim
