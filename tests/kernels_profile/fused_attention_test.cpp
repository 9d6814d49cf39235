// File: tests/kernels_profile/fused_attention_test.cpp
// `attention: fused` (kernels_profile/fused_attention.hpp): the published fused/flash ratio read at
// the op's head dimension and sequence length, applied to the measured FlashAttention-2 rows of
// the GPUs it applies to (and of those borrowing their tables), never elsewhere; bad rows refused.
#include "kernels_profile/fused_attention.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <fstream>

#include "base/input_error.hpp"
#include "kernels_profile/cost_model.hpp"
#include "planner/strategies.hpp"
#include "test_support.hpp"

namespace hetsim {
namespace {

const FusedAttentionTable& shipped_h100() {
  const FusedAttentionTable* t = fused_attention_for("H100-SXM5-80GB", "");
  EXPECT_NE(t, nullptr);
  return *t;
}

TEST(FusedAttention, ThePublishedPointsAreReadBackExactly) {
  const FusedAttentionTable& t = shipped_h100();
  EXPECT_EQ(t.measured_on, "H100-SXM5-80GB");
  // FlashAttention-3 paper, Figure 5 (d): causal forward, head dim 128, 8k: cuDNN 529, FA2 333.
  EXPECT_DOUBLE_EQ(*t.speedup(false, true, 128, 8192), 529.0 / 333.0);
  // Figure 6 (b): backward, head dim 128, 4k: cuDNN 499, FA2 310.
  EXPECT_DOUBLE_EQ(*t.speedup(true, false, 128, 4096), 499.0 / 310.0);
}

TEST(FusedAttention, BetweenPointsLinearInLog2AndTheNearestBeyondThem) {
  const FusedAttentionTable& t = shipped_h100();
  // 6k lies log2(6k/4k) = 0.585 of the way from 4k to 8k (causal forward, head dim 128).
  const double lo = 518.0 / 319.0, hi = 529.0 / 333.0, f = std::log2(6144.0 / 4096.0);
  EXPECT_NEAR(*t.speedup(false, true, 128, 6144), lo + f * (hi - lo), 1e-12);
  EXPECT_DOUBLE_EQ(*t.speedup(false, true, 128, 131072), 539.0 / 335.0);  // past 16k: 16k's
  EXPECT_DOUBLE_EQ(*t.speedup(false, true, 128, 128), 315.0 / 191.0);     // below 512: 512's
  // Head dim 96: log2(96/64) / log2(128/64) = 0.585 of the way from 64 to 128.
  const double h64 = 379.0 / 295.0, h128 = 529.0 / 333.0, g = std::log2(96.0 / 64.0);
  EXPECT_NEAR(*t.speedup(false, true, 96, 8192), h64 + g * (h128 - h64), 1e-12);
}

TEST(FusedAttention, ACausalBackwardTakesTheNonCausalRatioWhereNoCausalOneIsPublished) {
  const FusedAttentionTable& t = shipped_h100();
  EXPECT_DOUBLE_EQ(*t.speedup(true, true, 128, 8192), *t.speedup(true, false, 128, 8192));
}

TEST(FusedAttention, ItAppliesToTheH100TheH200AndGpusBorrowingTheH100sTablesOnly) {
  EXPECT_NE(fused_attention_for("H200-SXM-141GB", ""), nullptr);
  EXPECT_NE(fused_attention_for("B200", "H100-SXM5-80GB"), nullptr);
  EXPECT_EQ(fused_attention_for("A100-SXM4-80GB", ""), nullptr);  // Ampere: TE runs FlashAttention-2
  EXPECT_EQ(fused_attention_for("MI300X", ""), nullptr);
}

TEST(FusedAttention, TheCostModelDividesTheMeasuredFlashTimeByTheRatioAndSaysItIsScaled) {
  const CostModel cost = CostModel::shipped();
  const Device h100 = load_shipped_device("H100-SXM5-80GB", Diagnostic{});
  const Device a100 = load_shipped_device("A100-SXM4-80GB", Diagnostic{});
  Op op = Op::make("attention", OpKind::kFlashAttention, 0);
  op.gemm = {32, 8192, 8192, 128};  // 32 heads of one sequence of 8192, head dim 128
  op.causal = true;
  op.fwd_flops = 2.0 * 8192 * 8192 * 32 * 256;
  op.bwd_flops = 2 * op.fwd_flops;
  const OpCost flash_fwd = cost.op_time(h100, op, DType::kBf16, Pass::kForward);
  const OpCost flash_bwd = cost.op_time(h100, op, DType::kBf16, Pass::kBackward);
  const OpCost flash_a100 = cost.op_time(a100, op, DType::kBf16, Pass::kForward);
  op.fused_attention = true;
  const OpCost fused_fwd = cost.op_time(h100, op, DType::kBf16, Pass::kForward);
  const OpCost fused_bwd = cost.op_time(h100, op, DType::kBf16, Pass::kBackward);
  const FusedAttentionTable& t = shipped_h100();
  EXPECT_DOUBLE_EQ(fused_fwd.seconds, flash_fwd.seconds / *t.speedup(false, true, 128, 8192));
  EXPECT_DOUBLE_EQ(fused_bwd.seconds, flash_bwd.seconds / *t.speedup(true, true, 128, 8192));
  EXPECT_EQ(flash_fwd.by_source[static_cast<int>(CostSource::kScaled)], 0);  // measured rows
  EXPECT_DOUBLE_EQ(fused_fwd.by_source[static_cast<int>(CostSource::kScaled)], fused_fwd.seconds);
  EXPECT_DOUBLE_EQ(cost.op_time(a100, op, DType::kBf16, Pass::kForward).seconds, flash_a100.seconds);
}

TEST(FusedAttention, TheAssumptionsSayWhereTheRatioAppliesAndWhereFusedCostsAsFlash) {
  ModelSpec model = load_model(test::shipped("workloads", "gpt3-1.3b"));
  const Cluster cluster = test::shipped_cluster("pair-a100-h100");
  const auto line = [&] {
    for (const std::string& a : assumptions(model, cluster, CostModel::shipped())) {
      if (a.starts_with("attention: fused")) return a;
    }
    return std::string();
  };
  EXPECT_EQ(line(), "");  // flash: nothing to say
  model.training.attention = AttentionKernel::kFused;
  const std::string said = line();
  EXPECT_NE(said.find("on H100-SXM5-80GB"), std::string::npos) << said;
  EXPECT_NE(said.find("costed as flash on A100-SXM4-80GB"), std::string::npos) << said;
}

TEST(FusedAttention, RowsThatAreWrongAreRefusedWithTheirLineAndColumn) {
  const auto file = std::filesystem::temp_directory_path() / ("hetsim_fused_" + std::to_string(::getpid()) + ".csv");
  std::ofstream(file) << "measured_on,applies_to,pass,causal,head_dim,seq_len,flash_tflops,fused_tflops,source\n"
                      << "H100-SXM5-80GB,H100-SXM5-80GB,sideways,maybe,128,8192,333,529,paper\n"
                      << "H100-SXM5-80GB,H100-SXM5-80GB H999,forward,true,128,8192,0,529,paper\n";
  try {
    (void)load_fused_attention(file);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(":2:31: error: pass: \"sideways\" is not forward or backward"), std::string::npos) << what;
    EXPECT_NE(what.find("causal: \"maybe\" is not true or false"), std::string::npos) << what;
    EXPECT_NE(what.find("unknown device \"H999\""), std::string::npos) << what;
    EXPECT_NE(what.find("flash_tflops: 0 is out of range"), std::string::npos) << what;
  }
  std::filesystem::remove(file);
}

}  // namespace
}  // namespace hetsim
