// File: tests/workloads/precision_map_test.cpp
// Per-operator and per-layer GEMM formats under a low-precision recipe (training.gemm_precision_by_op,
// training.dtype_layers, training.mtp_in_dtype): which format each operator runs in, the weight copies
// the recipe keeps per format, what the reader and the clusters refuse.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "planner/block_costs.hpp"
#include "planner/hybrid/megatron_args.hpp"
#include "planner/hybrid/one_stage_plan.hpp"
#include "test_support.hpp"
#include "topologies/cluster.hpp"
#include "workloads/gemm_precision.hpp"
#include "workloads/op_graph.hpp"

namespace hetsim {
namespace {

ModelSpec super_nvfp4() { return load_model(test::source_dir() / "studies/validation/models/nemotron-3-super-nvfp4.yaml"); }

GemmPrecision format_of(const ModelSpec& m, const OpGraph& g, const std::string& op) { return gemm_precision_of(m, test::op_named(g, op)); }

TEST(PrecisionMap, EachOperatorRunsInItsOwnFormat) {
  // Nemotron 3 Super's NVFP4 recipe: NVFP4 but for attention's projections and the latent ones (BF16),
  // the Mamba out-projection (MXFP8), the last 14 of its 88 decoder layers and the MTP passes (BF16).
  const ModelSpec m = super_nvfp4();
  const OpGraph g = build_op_graph(m, 1, m.training.dtype);
  EXPECT_EQ(format_of(m, g, "layer1.expert_fc1"), GemmPrecision::kNvfp4);
  EXPECT_EQ(format_of(m, g, "layer1.shared_fc2"), GemmPrecision::kNvfp4);
  EXPECT_EQ(format_of(m, g, "layer0.mamba_in"), GemmPrecision::kNvfp4);
  EXPECT_EQ(format_of(m, g, "layer0.mamba_out"), GemmPrecision::kMxfp8);
  EXPECT_EQ(format_of(m, g, "layer1.moe_latent_in"), GemmPrecision::kDtype);
  EXPECT_EQ(format_of(m, g, "layer1.moe_latent_out"), GemmPrecision::kDtype);
  EXPECT_EQ(format_of(m, g, "layer7.qkv"), GemmPrecision::kDtype);
  EXPECT_EQ(format_of(m, g, "layer7.attn_out"), GemmPrecision::kDtype);
  EXPECT_EQ(format_of(m, g, "layer1.router"), GemmPrecision::kDtype);  // never the recipe's
  // Layers 74..87 in BF16 whole; 73 not; the MTP layers (88..91) in BF16.
  EXPECT_EQ(format_of(m, g, "layer72.expert_fc1"), GemmPrecision::kNvfp4);
  EXPECT_EQ(format_of(m, g, "layer73.mamba_out"), GemmPrecision::kMxfp8);
  EXPECT_EQ(format_of(m, g, "layer74.expert_fc1"), GemmPrecision::kDtype);
  EXPECT_EQ(format_of(m, g, "layer75.mamba_out"), GemmPrecision::kDtype);
  EXPECT_EQ(format_of(m, g, "layer87.expert_fc1"), GemmPrecision::kDtype);
  EXPECT_EQ(format_of(m, g, "layer89.expert_fc1"), GemmPrecision::kDtype);
  // The graph marks them so: NVFP4's 4-bit inputs, MXFP8's, none.
  EXPECT_EQ(test::op_named(g, "layer1.expert_fc1").gemm_dtype, DType::kNvfp4);
  EXPECT_EQ(test::op_named(g, "layer0.mamba_out").gemm_dtype, DType::kMxfp8);
  EXPECT_FALSE(test::op_named(g, "layer7.qkv").gemm_dtype.has_value());
  EXPECT_EQ(test::op_named(g, "layer87.expert_fc1").cast_fwd_bytes, 0);
  // The CLI's --precision dtype (an ablation) puts every GEMM in the dtype, the map included.
  ModelSpec off = m;
  off.training.gemm_precision = GemmPrecision::kDtype;
  EXPECT_EQ(format_of(off, build_op_graph(off, 1, off.training.dtype), "layer0.mamba_out"), GemmPrecision::kDtype);
}

TEST(PrecisionMap, WeightCopiesAreCountedPerFormat) {
  const ModelSpec m = super_nvfp4();
  const OpGraph g = build_op_graph(m, 1, m.training.dtype);
  double all = 0, nvfp4 = 0, mxfp8 = 0;
  for (const Op& op : g.ops) {
    all += op.params;
    const GemmPrecision p = gemm_precision_of(m, op);
    nvfp4 += p == GemmPrecision::kNvfp4 ? op.params : 0;
    mxfp8 += p == GemmPrecision::kMxfp8 ? op.params : 0;
  }
  ASSERT_GT(mxfp8, 0);
  const auto shares = gemm_precision_param_shares(m);
  ASSERT_EQ(shares.size(), 2u);
  EXPECT_EQ(shares[0].first, GemmPrecision::kNvfp4);  // in the order the graph meets them: mamba_in first
  EXPECT_DOUBLE_EQ(shares[0].second, nvfp4 / all);
  EXPECT_DOUBLE_EQ(shares[1].second, mxfp8 / all);
  EXPECT_DOUBLE_EQ(gemm_precision_param_share(m), nvfp4 / all + mxfp8 / all);
  EXPECT_DOUBLE_EQ(weight_copy_bytes_per_param(m, true),
                   weight_copy_bytes(GemmPrecision::kNvfp4, true) * nvfp4 / all + weight_copy_bytes(GemmPrecision::kMxfp8, true) * mxfp8 / all);
  // Most of the model is its experts, in NVFP4 outside the last 14 layers: 40 - 7 = 33 of 41 MoE layers' worth.
  EXPECT_GT(nvfp4 / all, 0.7);
  EXPECT_LT(nvfp4 / all, 0.85);
  // A uniform recipe: one format, the share of every recipe GEMM's weights.
  ModelSpec uniform = m;
  uniform.training.gemm_precision_by_op.clear();
  uniform.training.dtype_layers_last = 0;
  uniform.training.mtp_in_dtype = false;
  ASSERT_EQ(gemm_precision_param_shares(uniform).size(), 1u);
  EXPECT_GT(gemm_precision_param_share(uniform), nvfp4 / all + mxfp8 / all);
}

TEST(PrecisionMap, AFormatTheMapAddsMustBeOnEveryGpu) {
  // An FP8 recipe on H100 with one operator in MXFP8, which Hopper lacks: refused at gemm_precision.
  ModelSpec m = load_model(test::shipped("workloads", "nemotron-3-nano"));
  m.training.gemm_precision = GemmPrecision::kFp8Current;
  const Cluster h100 = test::fixture_cluster("dgx-h100-16");
  EXPECT_NO_THROW((void)resolve_dtype(m, h100));
  m.training.gemm_precision_by_op = {{"mamba_out", GemmPrecision::kMxfp8}};
  try {
    (void)resolve_dtype(m, h100);
    ADD_FAILURE() << "mxfp8 on H100 accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("mxfp8 needs tensor cores with MX block scaling"), std::string::npos) << e.what();
  }
}

TEST(PrecisionMap, MegatronsArgumentsKeepTheFirstAndLastLayersInBf16) {
  ModelSpec m = load_model(test::shipped("workloads", "llama2-7b"));
  m.training.dtype = DType::kBf16;
  m.training.gemm_precision = GemmPrecision::kFp8Current;
  const Cluster c = test::h100_nodes(1);
  const HybridPlan p = test::one_stage_plan(8, static_cast<int>(m.layers), m.training.global_batch / 8, 8);
  EXPECT_EQ(megatron_args(p, m, c).args.find("first-last-layers-bf16"), std::string::npos);
  m.training.dtype_layers_first = 1;
  m.training.dtype_layers_last = 2;
  const std::string args = megatron_args(p, m, c).args;
  EXPECT_NE(args.find("--fp8-recipe tensorwise --first-last-layers-bf16 --num-layers-at-start-in-bf16 1 --num-layers-at-end-in-bf16 2"),
            std::string::npos)
      << args;
}

TEST(PrecisionMap, BadMapsAreRefusedAtTheirField) {
  const auto refused = [](const std::string& name, const std::string& training, const std::string& body, const std::string& want) {
    const std::filesystem::path path = test::temp(name);
    std::ofstream(path) << "name: m\nfamily: llama\nlayers: 4\nhidden: 256\nheads: 4\nffn_hidden: 512\nseq_len: 1024\nvocab: 1000\n"
                        << body << "training:\n  global_batch: 8\n  micro_batch: 1\n  dtype: bf16\n" << training;
    try {
      (void)load_model(path);
      ADD_FAILURE() << training << " accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(name + ":"), std::string::npos) << e.what();
    }
  };
  const std::string recipe = "  gemm_precision: mxfp8\n";
  refused("unknown-op.yaml", recipe + "  gemm_precision_by_op: {qkvv: dtype}\n", "", "qkvv");
  refused("bad-format.yaml", recipe + "  gemm_precision_by_op: {qkv: fp6}\n", "", "fp6");
  refused("absent-op.yaml", recipe + "  gemm_precision_by_op: {mamba_out: dtype}\n", "",
          "the model has no mamba_out operators; its GEMM operators: qkv, attn_out, mlp_gate_up, mlp_down");
  refused("no-recipe.yaml", "  gemm_precision_by_op: {qkv: dtype}\n", "", "there is no recipe");
  refused("no-recipe-layers.yaml", "  dtype_layers: {first: 1}\n", "", "there is no recipe");
  refused("all-layers.yaml", recipe + "  dtype_layers: {first: 2, last: 2}\n", "", "leave none of the model's 4 decoder layers");
  refused("layers-key.yaml", recipe + "  dtype_layers: {middle: 1}\n", "", "middle");
  // Well formed, it loads; the first layer's GEMMs and qkv stay in the dtype.
  const std::filesystem::path good = test::temp("good-map.yaml");
  std::ofstream(good) << "name: m\nfamily: llama\nlayers: 4\nhidden: 256\nheads: 4\nffn_hidden: 512\nseq_len: 1024\nvocab: 1000\n"
                      << "training: {global_batch: 8, micro_batch: 1, dtype: bf16, gemm_precision: mxfp8, dtype_layers: {first: 1},"
                      << " gemm_precision_by_op: {qkv: dtype, mlp_down: nvfp4}}\n";
  const ModelSpec m = load_model(good);
  const OpGraph g = build_op_graph(m, 1, m.training.dtype);
  EXPECT_EQ(format_of(m, g, "layer0.mlp_down"), GemmPrecision::kDtype);
  EXPECT_EQ(format_of(m, g, "layer1.mlp_down"), GemmPrecision::kNvfp4);
  EXPECT_EQ(format_of(m, g, "layer1.mlp_gate_up"), GemmPrecision::kMxfp8);
  EXPECT_EQ(format_of(m, g, "layer1.qkv"), GemmPrecision::kDtype);
}

}  // namespace
}  // namespace hetsim
