// File: tests/kernels_profile/device_test.cpp
#include "kernels_profile/device.hpp"

#include <gtest/gtest.h>

#include "kernels_profile/calibration_profile.hpp"

#include <fstream>
#include <map>
#include <sstream>

#include "base/input_error.hpp"
#include "base/temp_dir.hpp"

#include "kernels_profile/cost_model.hpp"
#include "test_support.hpp"
#include "workloads/model.hpp"
#include "workloads/op_graph.hpp"

namespace hetsim {
namespace {

TEST(Device, EveryShippedDeviceLoads) {
  const std::vector<std::string> names = shipped_device_names();
  EXPECT_EQ(names.size(), 19u);
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

// The devices added for 2026 list the dense peaks they use in their source text ("dense TFLOPS
// used: fp32 75, tf32 1100, ...;"), next to the datasheet figures those came from (halved where the
// datasheet prints sparse ones): every listed figure is the file's peak, and every peak is listed.
TEST(Device, PeaksAreTheFiguresTheirSourceStates) {
  const std::string marker = "dense TFLOPS used: ";
  for (const char* n : {"B200", "B300", "GB200", "GB300", "H20", "L40S", "MI325X", "MI355X"}) {
    EXPECT_NE(load_device(test::shipped("kernels_profile/devices", n)).source.find(marker), std::string::npos) << n;
  }
  int stated = 0;
  for (const std::string& n : shipped_device_names()) {
    const Device d = load_device(test::shipped("kernels_profile/devices", n));
    const size_t at = d.source.find(marker);
    if (at == std::string::npos) continue;
    ++stated;
    const size_t from = at + marker.size();
    std::istringstream list(d.source.substr(from, d.source.find(';', from) - from));
    std::map<DType, double> listed;
    std::string item;
    while (std::getline(list, item, ',')) {
      std::istringstream pair(item);
      std::string name;
      double tflops = 0;
      ASSERT_TRUE(pair >> name >> tflops) << n << ": \"" << item << "\"";
      const std::optional<DType> t = dtype_from_name(name);
      ASSERT_TRUE(t.has_value()) << n << ": " << name;
      listed[*t] = tflops * 1e12;
    }
    EXPECT_EQ(listed.size(), d.peak_flops.size()) << n;
    for (const auto& [t, flops] : d.peak_flops) {
      ASSERT_TRUE(listed.contains(t)) << n << " lists no " << dtype_name(t);
      EXPECT_NEAR(listed[t], flops, 1e-12 * flops) << n << " " << dtype_name(t);
    }
  }
  EXPECT_EQ(stated, 8);
}

TEST(Device, BlockScaledFormatsOnlyWhereTheSiliconHasThem) {
  const auto dev = [](const char* n) { return load_device(test::shipped("kernels_profile/devices", n)); };
  // Blackwell: MX block scaling at its fp8 and fp4 rates, and NVFP4. HGX B200: 72 / 8 = 9 PFLOPS
  // FP4 dense as printed; FP8/FP6 72 / 8 / 2 = 4.5 (sparse halved).
  const Device b200 = dev("B200");
  EXPECT_DOUBLE_EQ(b200.peak(DType::kNvfp4), 9e15);
  EXPECT_DOUBLE_EQ(b200.peak(DType::kMxfp8), 4.5e15);
  EXPECT_DOUBLE_EQ(b200.peak(DType::kMxfp8), b200.peak(DType::kFp8));
  EXPECT_DOUBLE_EQ(b200.peak(DType::kBf16), 2.25e15);
  for (const char* n : {"B200", "B300", "GB200", "GB300"}) {
    const Device d = dev(n);
    for (DType t : {DType::kMxfp8, DType::kMxfp6, DType::kNvfp4, DType::kMxfp4}) EXPECT_TRUE(d.supports(t)) << n << " " << dtype_name(t);
  }
  // Blackwell Ultra raises only FP4: GB300 15 PFLOPS dense against GB200's 10, the same 2.5 bf16.
  EXPECT_DOUBLE_EQ(dev("GB300").peak(DType::kNvfp4), 1.5e16);
  EXPECT_DOUBLE_EQ(dev("GB200").peak(DType::kNvfp4), 1e16);
  EXPECT_DOUBLE_EQ(dev("GB300").peak(DType::kBf16), dev("GB200").peak(DType::kBf16));
  // Hopper, Ada and CDNA3: fp8 without block scaling.
  for (const char* n : {"H100-SXM5-80GB", "H200-SXM-141GB", "H20", "L40S", "MI300X", "MI325X"}) {
    const Device d = dev(n);
    EXPECT_TRUE(d.supports(DType::kFp8)) << n;
    for (DType t : {DType::kMxfp8, DType::kMxfp6, DType::kNvfp4, DType::kMxfp4}) EXPECT_FALSE(d.supports(t)) << n << " " << dtype_name(t);
  }
  // CDNA4: the OCP MX formats, MXFP6 and MXFP4 at twice its fp8 rate (10066.3 vs 2 x 5033.2), no
  // NVFP4 and no TF32 matrix path.
  const Device mi355 = dev("MI355X");
  EXPECT_DOUBLE_EQ(mi355.peak(DType::kMxfp8), mi355.peak(DType::kFp8));
  EXPECT_NEAR(mi355.peak(DType::kMxfp4), 2 * mi355.peak(DType::kFp8), 1e-5 * mi355.peak(DType::kMxfp4));
  EXPECT_EQ(mi355.peak(DType::kMxfp6), mi355.peak(DType::kMxfp4));
  EXPECT_FALSE(mi355.supports(DType::kNvfp4));
  EXPECT_FALSE(mi355.supports(DType::kTf32));
  EXPECT_EQ(mi355.vendor, Vendor::kAmd);
}

TEST(Device, Fp8GemmsOfAnyLayoutOnBlackwellAlone) {
  // Compute capability 10.x: B200 and GB200 (10.0), B300 and GB300 (10.3). Hopper, Ada and the AMD
  // files keep TN-only FP8 GEMMs (the default).
  for (const std::string& n : shipped_device_names()) {
    const Device d = load_device(test::shipped("kernels_profile/devices", n));
    const bool blackwell = n == "B200" || n == "GB200" || n == "B300" || n == "GB300";
    EXPECT_EQ(d.fp8_any_layout, blackwell) << n;
    EXPECT_EQ(d.fp8_any_layout_source.empty(), !blackwell) << n;
  }
  // A GPU without FP8 cannot take FP8 GEMMs of any layout.
  const TempDir dir("device");
  const std::filesystem::path file = dir.path() / "V100-SXM2-32GB.yaml";
  std::ifstream in(test::shipped("kernels_profile/devices", "V100-SXM2-32GB"));
  std::ofstream(file) << std::string(std::istreambuf_iterator<char>(in), {}) << "fp8_any_layout: {supported: true, source: \"x\"}\n";
  try {
    (void)load_device(file);
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("fp8_any_layout: says FP8 GEMMs take any layout, but `peak` has no fp8"), std::string::npos) << e.what();
  }
}

TEST(DType, MxFormatsCountTheirScales) {
  // One 8-bit scale per 32 elements: 1/32 byte each on top of the element.
  EXPECT_EQ(dtype_bytes(DType::kMxfp6), 0.75 + 1.0 / 32);
  EXPECT_EQ(dtype_bytes(DType::kMxfp4), 0.5 + 1.0 / 32);
  for (DType t : {DType::kFp32, DType::kTf32, DType::kFp16, DType::kBf16, DType::kFp8, DType::kMxfp8, DType::kNvfp4,
                  DType::kMxfp6, DType::kMxfp4}) {
    EXPECT_EQ(dtype_from_name(dtype_name(t)), t) << dtype_name(t);
  }
}

TEST(CostModel, RooflineIsComputeOrMemoryBoundPlusLaunch) {
  const CalibrationScope raw("none");  // the kernel model alone (A100s carry a framework profile by default)
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
