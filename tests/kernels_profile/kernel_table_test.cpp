// File: tests/kernels_profile/kernel_table_test.cpp
// Lookup, interpolation and fitting on synthetic tables (known functions, no GPU needed).
#include "kernels_profile/kernel_table.hpp"

#include <gtest/gtest.h>

#include "kernels_profile/cost_model.hpp"
#include "kernels_profile/validation.hpp"
#include "kernels_profile/synthetic_tables.hpp"
#include "test_support.hpp"

namespace hetsim {
namespace {

class KernelTable : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::synthetic_table_dir("table");
    tables_ = KernelTables::load_dir(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  const KernelSeries& gemm() const { return *tables_.find("A100-SXM4-40GB", "gemm", DType::kFp16); }
  std::filesystem::path dir_;
  KernelTables tables_;
};

TEST_F(KernelTable, ExactShapesAreMeasured) {
  const auto e = gemm().gemm({1, 4096, 2048, 8192});
  ASSERT_TRUE(e);
  EXPECT_EQ(e->source, CostSource::kMeasured);
  EXPECT_NEAR(e->seconds / test::synthetic_gemm_s(1, 4096, 2048, 8192), 1, 1e-6);
}

TEST_F(KernelTable, ShapesInsideTheTableAreInterpolatedInLogSpace) {
  for (const GemmShape& g : {GemmShape{1, 3000, 5000, 6000}, GemmShape{1, 1500, 12000, 2500}, GemmShape{1, 6144, 6144, 1536}}) {
    const auto e = gemm().gemm(g);
    ASSERT_TRUE(e);
    EXPECT_EQ(e->source, CostSource::kInterpolated);
    EXPECT_NEAR(e->seconds / test::synthetic_gemm_s(1, g.m, g.n, g.k), 1, 0.10) << g.m << "x" << g.n << "x" << g.k;
  }
}

TEST_F(KernelTable, ShapesOutsideAreFitted) {
  // Large GEMMs: the efficiency has saturated, so t = c0 + c1 FLOPs fits them closely.
  const auto e = gemm().gemm({1, 65536, 16384, 16384});
  ASSERT_TRUE(e);
  EXPECT_EQ(e->source, CostSource::kFitted);
  EXPECT_NEAR(e->seconds / test::synthetic_gemm_s(1, 65536, 16384, 16384), 1, 0.10);
  const KernelSeries& ln = *tables_.find("A100-SXM4-40GB", "layernorm_fwd", DType::kFp16);
  const auto big = ln.by_bytes(1e12);
  ASSERT_TRUE(big);
  EXPECT_EQ(big->source, CostSource::kFitted);
  EXPECT_NEAR(big->seconds / test::synthetic_memory_s(1e12), 1, 0.01);  // the model is exactly linear
  const auto mid = ln.by_bytes(3e8);
  EXPECT_EQ(mid->source, CostSource::kInterpolated);
  EXPECT_NEAR(mid->seconds / test::synthetic_memory_s(3e8), 1, 0.02);
}

TEST_F(KernelTable, CostModelPrefersTablesAndSaysSo) {
  const CostModel cost(std::make_shared<KernelTables>(tables_), nullptr);
  const Device a100 = load_device(test::shipped("kernels_profile/devices", "A100-SXM4-40GB"));
  const Device v100 = load_device(test::shipped("kernels_profile/devices", "V100-SXM2-32GB"));
  Op qkv = Op::make("qkv", OpKind::kLinear, 0);
  qkv.gemm = {1, 4096, 6144, 2048};
  qkv.fwd_flops = 2.0 * 4096 * 6144 * 2048;
  qkv.bwd_flops = 2 * qkv.fwd_flops;
  const OpCost measured = cost.op_time(a100, qkv, DType::kFp16, Pass::kForward);
  EXPECT_GT(measured.by_source[static_cast<int>(CostSource::kInterpolated)], 0);
  EXPECT_NEAR(measured.seconds / test::synthetic_gemm_s(1, 4096, 6144, 2048), 1, 0.1);
  // Backward: dX (4096 x 2048 x 6144) and dW (2048 x 6144 x 4096).
  const double bwd_truth = test::synthetic_gemm_s(1, 4096, 2048, 6144) + test::synthetic_gemm_s(1, 2048, 6144, 4096);
  EXPECT_NEAR(cost.op_time(a100, qkv, DType::kFp16, Pass::kBackward).seconds / bwd_truth, 1, 0.1);
  const OpCost roof = cost.op_time(v100, qkv, DType::kFp16, Pass::kForward);
  EXPECT_DOUBLE_EQ(roof.by_source[static_cast<int>(CostSource::kRoofline)], roof.seconds);
}

TEST_F(KernelTable, ValidationReportsFitAndLeaveOneOutErrors) {
  // The accuracy target for interpolated shapes is 10 %; leaving a sample out of a x4
  // grid leaves a x16 gap to interpolate across.
  const std::vector<KernelValidation> v = validate_kernels(tables_);
  ASSERT_FALSE(v.empty());
  for (const KernelValidation& k : v) {
    if (k.kernel != "gemm") {
      EXPECT_LT(median(k.fit_errors), 0.01) << k.kernel;  // t = c0 + c1 bytes exactly
    }
    EXPECT_LT(median(k.interp_errors), 0.10) << k.kernel;
    EXPECT_GT(k.interp_errors.size(), 5u) << k.kernel;
  }
}

TEST(Median, OddEvenAndEmpty) {
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median({4, 1, 2, 3}), 2.5);
  EXPECT_DOUBLE_EQ(median({}), 0);
}

}  // namespace
}  // namespace hetsim
