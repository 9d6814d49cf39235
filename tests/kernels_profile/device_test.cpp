// File: tests/kernels_profile/device_test.cpp
#include "kernels_profile/device.hpp"

#include <gtest/gtest.h>

#include "kernels_profile/cost_model.hpp"
#include "test_support.hpp"
#include "workloads/model.hpp"
#include "workloads/op_graph.hpp"

namespace hetsim {
namespace {

TEST(Device, EveryShippedDeviceLoads) {
  const std::vector<std::string> names = shipped_device_names();
  EXPECT_EQ(names.size(), 11u);
  for (const std::string& n : names) {
    const Device d = load_device(test::shipped("kernels_profile/devices", n));
    EXPECT_EQ(d.name, n);
    EXPECT_TRUE(d.supports(DType::kFp32)) << n;
    EXPECT_FALSE(d.source.empty()) << n;
    EXPECT_FALSE(d.efficiency.source.empty()) << n;
  }
}

TEST(Device, DatasheetFiguresAndMissingDtypes) {
  const Device v100 = load_device(test::shipped("kernels_profile/devices", "V100-SXM2-32GB"));
  EXPECT_FALSE(v100.supports(DType::kBf16));
  EXPECT_DOUBLE_EQ(v100.peak(DType::kFp16), 125e12);
  EXPECT_DOUBLE_EQ(v100.memory_bytes, 32.0 * (1 << 30));
  const Device a100 = load_device(test::shipped("kernels_profile/devices", "A100-SXM4-40GB"));
  EXPECT_DOUBLE_EQ(a100.peak(DType::kBf16), 312e12);
  EXPECT_DOUBLE_EQ(a100.memory_bandwidth_Bps, 1555e9);
  const Device mi300 = load_device(test::shipped("kernels_profile/devices", "MI300X"));
  EXPECT_EQ(mi300.vendor, Vendor::kAmd);
  EXPECT_EQ(mi300.collective_library, "rccl");
}

TEST(CostModel, RooflineIsComputeOrMemoryBoundPlusLaunch) {
  const Device a100 = load_device(test::shipped("kernels_profile/devices", "A100-SXM4-40GB"));
  const CostModel cost;
  Op gemm = Op::make("g", OpKind::kLinear, -1);
  gemm.fwd_flops = 2.0 * 8192 * 8192 * 8192;
  gemm.fwd_bytes = 3.0 * 8192 * 8192 * 2;
  // Compute-bound: flops / (312e12 * 0.8692) + 5us (an op without a GEMM shape runs at
  // efficiency.matmul, 271.2 / 312 TFLOPS: the A100's maximum achievable matmul FLOPS).
  const double expect_gemm = gemm.fwd_flops / (312e12 * 0.8692) + 5e-6;
  EXPECT_NEAR(cost.op_time(a100, gemm, DType::kFp16, Pass::kForward).seconds, expect_gemm, 1e-12);
  Op add = Op::make("a", OpKind::kResidual, -1);
  add.fwd_flops = 1e8;
  add.fwd_bytes = 6e8;
  // Memory-bound: bytes / (1555e9 * 0.8) + 5us.
  const double expect_add = 6e8 / (1555e9 * 0.8) + 5e-6;
  EXPECT_NEAR(cost.op_time(a100, add, DType::kFp16, Pass::kForward).seconds, expect_add, 1e-12);
}

}  // namespace
}  // namespace hetsim
