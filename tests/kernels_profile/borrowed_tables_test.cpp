// File: tests/kernels_profile/borrowed_tables_test.cpp
// A GPU without kernel tables of its own borrows another's (device file: kernels_from), scaled by
// the two files' achievable rates, and says so (CostSource::kScaled); its own rows win; a lender
// must be a known GPU of the same vendor that borrows nothing itself.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "base/input_error.hpp"
#include "kernels_profile/cost_model.hpp"
#include "test_support.hpp"

namespace hetsim {
namespace {

constexpr const char* kHeader = "device,kernel,dtype,batch,m,n,k,bytes,seconds,gpu,driver,clock_mhz,date,library";

class BorrowedTables : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("hetsim_borrowed_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  CostModel with_rows(const std::string& rows) {
    std::ofstream(dir_ / "rows.csv") << kHeader << "\n" << rows;
    return CostModel(std::make_shared<KernelTables>(KernelTables::load_dir(dir_)), nullptr);
  }
  static std::string row(const std::string& device, const std::string& kernel, const std::string& dtype, const std::string& shape,
                         double seconds) {
    return device + "," + kernel + "," + dtype + "," + shape + "," + std::to_string(seconds) + ",gpu,13.0,1980,2026-11-27T00:00:00Z,torch\n";
  }
  std::filesystem::path dir_;
};

TEST_F(BorrowedTables, AB200TakesTheH100sTimeAtEachShapeScaledByTheAchievableRates) {
  const Device h100 = load_shipped_device("H100-SXM5-80GB", Diagnostic{});
  Device b200 = load_shipped_device("B200", Diagnostic{});
  b200.fitted = FittedCosts{};  // the kernel model alone: no calibration profile's GEMM excess
  ASSERT_EQ(b200.kernels_from, "H100-SXM5-80GB");
  const CostModel cost = with_rows(row("H100-SXM5-80GB", "gemm_fwd", "bf16", "1,4096,12288,4096,", 0.6e-3) +
                                   row("H100-SXM5-80GB", "gemm_fwd", "fp8", "1,4096,12288,4096,", 0.35e-3) +
                                   row("H100-SXM5-80GB", "layernorm_fwd", "bf16", ",,,,67108864", 40e-6));
  Op qkv = Op::make("qkv", OpKind::kLinear, 0);
  qkv.gemm = {1, 4096, 12288, 4096};
  qkv.fwd_flops = 2.0 * 4096 * 12288 * 4096;
  // bf16: the H100's achievable bf16 rate over the B200's, both from their device files.
  const double bf16 = (h100.peak(DType::kBf16) * h100.efficiency.matmul) / (b200.peak(DType::kBf16) * b200.efficiency.matmul);
  // Each measured time's fixed cost (the H100's kernel_launch) is the B200's own, not scaled.
  auto scaled = [&](double h100_s, double scale, const Device* d = nullptr) {
    return (d != nullptr ? *d : b200).efficiency.kernel_launch_s + (h100_s - h100.efficiency.kernel_launch_s) * scale;
  };
  const OpCost c = cost.op_time(b200, qkv, DType::kBf16, Pass::kForward);
  EXPECT_DOUBLE_EQ(c.seconds, scaled(0.6e-3, bf16));
  EXPECT_DOUBLE_EQ(c.by_source[static_cast<int>(CostSource::kScaled)], c.seconds);
  // mxfp8 (which the H100 lacks) reads the H100's fp8 rows, at the fp8 rates.
  qkv.gemm_dtype = DType::kMxfp8;
  const double fp8 = (h100.peak(DType::kFp8) * h100.efficiency.matmul) / (b200.peak(DType::kMxfp8) * b200.efficiency.matmul);
  EXPECT_DOUBLE_EQ(cost.op_time(b200, qkv, DType::kBf16, Pass::kForward).by_source[static_cast<int>(CostSource::kScaled)],
                   scaled(0.35e-3, fp8));
  // nvfp4 (no H100 rows of a 4-bit format either) reads them too, at the nvfp4 rates; a B300's at the
  // share of its nvfp4 peak its device file gives the format (efficiency.matmul_per_dtype).
  qkv.gemm_dtype = DType::kNvfp4;
  const double fp4 = (h100.peak(DType::kFp8) * h100.efficiency.matmul) / (b200.peak(DType::kNvfp4) * b200.efficiency.matmul);
  EXPECT_DOUBLE_EQ(cost.op_time(b200, qkv, DType::kBf16, Pass::kForward).by_source[static_cast<int>(CostSource::kScaled)],
                   scaled(0.35e-3, fp4));
  Device b300 = load_shipped_device("B300", Diagnostic{});
  b300.fitted = FittedCosts{};
  const double ultra = (h100.peak(DType::kFp8) * h100.efficiency.matmul) /
                       (b300.peak(DType::kNvfp4) * b300.efficiency.matmul_per_dtype.at(DType::kNvfp4));
  EXPECT_DOUBLE_EQ(cost.op_time(b300, qkv, DType::kBf16, Pass::kForward).by_source[static_cast<int>(CostSource::kScaled)],
                   scaled(0.35e-3, ultra, &b300));
  // A memory-bound kernel scales by the achievable memory bandwidths.
  Op ln = Op::make("ln", OpKind::kLayerNorm, 0);
  ln.fwd_bytes = 67108864;
  const double mem = (h100.memory_bandwidth_Bps * h100.efficiency.memory) / (b200.memory_bandwidth_Bps * b200.efficiency.memory);
  EXPECT_DOUBLE_EQ(cost.op_time(b200, ln, DType::kBf16, Pass::kForward).seconds, scaled(40e-6, mem));
  // The B200's own rows, where it has them, win.
  const CostModel own = with_rows(row("H100-SXM5-80GB", "gemm_fwd", "bf16", "1,4096,12288,4096,", 0.6e-3) +
                                  row("B200", "gemm_fwd", "bf16", "1,4096,12288,4096,", 0.2e-3));
  qkv.gemm_dtype.reset();
  const OpCost mine = own.op_time(b200, qkv, DType::kBf16, Pass::kForward);
  EXPECT_DOUBLE_EQ(mine.seconds, 0.2e-3);
  EXPECT_DOUBLE_EQ(mine.by_source[static_cast<int>(CostSource::kMeasured)], 0.2e-3);
}

TEST_F(BorrowedTables, ALenderMustBeAKnownGpuOfTheSameVendorThatBorrowsNothing) {
  const std::string b200 = [] {
    std::ifstream in(test::shipped("kernels_profile/devices", "B200"));
    return std::string(std::istreambuf_iterator<char>(in), {});
  }();
  auto refused = [&](const std::string& lender, const std::string& want) {
    std::string text = b200;
    const size_t at = text.find("  device: H100-SXM5-80GB");
    ASSERT_NE(at, std::string::npos);
    text.replace(at, std::string("  device: H100-SXM5-80GB").size(), "  device: " + lender);
    const auto file = dir_ / "B200.yaml";
    std::ofstream(file) << text;
    try {
      (void)load_device(file);
      ADD_FAILURE() << lender << " was accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
    }
  };
  refused("H100-SXM5-8GB", "kernels_from.device: unknown device \"H100-SXM5-8GB\"");
  refused("MI300X", "MI300X is amd: a GPU borrows kernel tables from its own vendor's GPUs only");
  refused("B200", "names this device itself");
  refused("B300", "a GPU that lends its kernel tables (kernels_from of another device file) borrows none itself");
}

}  // namespace
}  // namespace hetsim
