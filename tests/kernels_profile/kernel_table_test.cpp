// File: tests/kernels_profile/kernel_table_test.cpp
// Lookup, interpolation and fitting on synthetic tables (known functions, no GPU needed).
#include "kernels_profile/kernel_table.hpp"

#include <gtest/gtest.h>

#include "kernels_profile/calibration_profile.hpp"
#include <unistd.h>

#include <fstream>

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
  const CalibrationScope raw_{"none"};  // the tables and the kernel model alone (A100s carry a framework profile by default)
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

TEST_F(KernelTable, AShapeAskedAgainGetsTheSameAnswerAndChangedSamplesAreNotRemembered) {
  // gemm() remembers its answers (a planner asks the same shapes many times) and what it derives
  // from the samples, until they change.
  KernelSeries s = gemm();
  const GemmShape g{1, 3000, 5000, 6000};
  const std::optional<KernelEstimate> first = s.gemm(g), again = s.gemm(g);
  ASSERT_TRUE(first && again);
  EXPECT_EQ(first->seconds, again->seconds);  // bit for bit
  EXPECT_EQ(first->source, again->source);
  for (size_t i = 0; i < s.samples().size(); ++i) s.set_seconds(i, 2 * s.samples()[i].seconds);
  const std::optional<KernelEstimate> slower = s.gemm(g);
  ASSERT_TRUE(slower);
  EXPECT_NEAR(slower->seconds / first->seconds, 2, 1e-9);
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

TEST_F(KernelTable, FlashAttentionTakesCausalRowsWhereMeasuredElseScalesFullOnes) {
  const CostModel cost(std::make_shared<KernelTables>(tables_), nullptr);
  const Device a100 = load_device(test::shipped("kernels_profile/devices", "A100-SXM4-40GB"));
  Op attn = Op::make("attention", OpKind::kFlashAttention, 0);
  attn.gemm = {64, 2048, 2048, 128};
  attn.fwd_flops = 4.0 * 64 * 2048 * 2048 * 128;
  attn.bwd_flops = 2 * attn.fwd_flops;
  const double full = test::synthetic_gemm_s(64, 2048, 2048, 256);  // the table holds 6 significant digits
  // Full attention: the rows as measured.
  OpCost fwd = cost.op_time(a100, attn, DType::kFp16, Pass::kForward);
  EXPECT_EQ(fwd.by_source[static_cast<int>(CostSource::kMeasured)], fwd.seconds);
  EXPECT_NEAR(fwd.seconds, full, 1e-5 * full);
  // Causal: the causal forward rows (not full x tile fraction); no causal backward rows, so the
  // full backward times the tiles computed.
  attn.causal = true;
  attn.tile_fraction = 17.0 / 32.0;
  EXPECT_NEAR(cost.op_time(a100, attn, DType::kFp16, Pass::kForward).seconds, 0.6 * full, 1e-5 * full);
  EXPECT_NEAR(cost.op_time(a100, attn, DType::kFp16, Pass::kBackward).seconds, 2.5 * full * 17.0 / 32.0, 1e-5 * full);
  // A GPU without flash rows falls back to the roofline.
  const Device h100 = load_device(test::shipped("kernels_profile/devices", "H100-SXM5-80GB"));
  const OpCost roof = cost.op_time(h100, attn, DType::kFp16, Pass::kForward);
  EXPECT_DOUBLE_EQ(roof.by_source[static_cast<int>(CostSource::kRoofline)], roof.seconds);
}

TEST(LayerMeasurements, AttentionColumnSelectsTheFusedGraph) {
  const auto dir = std::filesystem::temp_directory_path() / ("hetsim_layers_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string header = "device,hidden,heads,ffn_hidden,seq_len,micro_batch,dtype,fwd_s,bwd_s,gpu,driver,clock_mhz,date";
  const std::string row = "H100-SXM5-80GB,4096,32,16384,2048,1,bf16,0.0013,0.0033,gpu,driver,1980,2026-11-23T00:00:00Z";
  std::ofstream(dir / "old.csv") << header << "\n" << row << "\n";
  std::ofstream(dir / "new.csv") << header << ",attention\n" << row << ",flash\n" << row << ",unfused\n";
  std::ofstream(dir / "bad.csv") << header << ",attention\n" << row << ",fused\n";
  const std::vector<LayerMeasurement> old_rows = load_layer_measurements(dir / "old.csv");
  const std::vector<LayerMeasurement> new_rows = load_layer_measurements(dir / "new.csv");
  ASSERT_EQ(old_rows.size(), 1u);
  ASSERT_EQ(new_rows.size(), 2u);
  EXPECT_FALSE(old_rows[0].flash);
  EXPECT_TRUE(new_rows[0].flash);
  EXPECT_FALSE(new_rows[1].flash);
  try {
    (void)load_layer_measurements(dir / "bad.csv");
    ADD_FAILURE() << "bad attention value accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.csv:2:"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("error: attention: \"fused\" is not one of: flash, unfused"), std::string::npos)
        << e.what();
  }
  // The fused layer is predicted without the s x s score tensor's kernels: faster on the roofline.
  const CostModel roofline(nullptr, nullptr);
  const Device h100 = load_device(test::shipped("kernels_profile/devices", "H100-SXM5-80GB"));
  const LayerPrediction fused = predict_layer(new_rows[0], h100, roofline);
  const LayerPrediction unfused = predict_layer(new_rows[1], h100, roofline);
  EXPECT_LT(fused.fwd_s, unfused.fwd_s);
  std::filesystem::remove_all(dir);
}

TEST_F(KernelTable, ValidationReportsFitAndLeaveOneOutErrors) {
  // The accuracy target for interpolated shapes is 10 %; leaving a sample out of a x4
  // grid leaves a x16 gap to interpolate across.
  const std::vector<KernelValidation> v = validate_kernels(tables_);
  ASSERT_FALSE(v.empty());
  for (const KernelValidation& k : v) {
    if (!is_shaped_kernel(k.kernel)) {
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

TEST(KernelTableRepeats, RowsOfOneShapeFromSeveralRunsTakeTheirMedian) {
  // Three runs of one GEMM shape (the shipped H100 table has such repeats, up to 3x apart): the
  // median is used, whatever the order of the rows; a second row in the same run is an error.
  const std::filesystem::path file = std::filesystem::temp_directory_path() / ("hetsim_repeats_" + std::to_string(getpid()) + ".csv");
  auto write = [&](const std::vector<std::pair<double, std::string>>& rows) {
    std::ofstream out(file);
    out << "device,kernel,dtype,batch,m,n,k,bytes,seconds,gpu,driver,clock_mhz,date\n";
    for (const auto& [s, date] : rows) out << "A100-SXM4-40GB,gemm,fp16,1,4096,4096,4096,," << s << ",A100,535,1410," << date << "\n";
  };
  auto measured = [&] {
    KernelTables t;
    t.load_file(file);
    t.prepare();
    const auto e = t.find("A100-SXM4-40GB", "gemm", DType::kFp16)->gemm({1, 4096, 4096, 4096});
    EXPECT_EQ(e->source, CostSource::kMeasured);
    return e->seconds;
  };
  write({{0.0009, "2026-01-01"}, {0.0006, "2026-01-02"}, {0.0027, "2026-01-03"}});
  EXPECT_DOUBLE_EQ(measured(), 0.0009);
  write({{0.0027, "2026-01-03"}, {0.0006, "2026-01-02"}, {0.0009, "2026-01-01"}});
  EXPECT_DOUBLE_EQ(measured(), 0.0009);
  write({{0.0008, "2026-01-01"}, {0.0006, "2026-01-02"}});
  EXPECT_DOUBLE_EQ(measured(), 0.0007);
  write({{0.0008, "2026-01-01"}, {0.0006, "2026-01-01"}});
  EXPECT_THROW(measured(), InputError);
  std::filesystem::remove(file);
}

}  // namespace
}  // namespace hetsim
