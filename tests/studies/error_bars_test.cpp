// File: tests/studies/error_bars_test.cpp
// What a run's summary says beside its error bars: that the GPU types compared stand under different
// calibration (a profile for some, the raw model for others), and that a GPU's peak memory comes
// within the memory bar of its capacity; and that a time bar is not lent across dense and MoE runs.
#include "studies/validation/error_bars.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "test_support.hpp"

namespace hetsim {
namespace {

TEST(CalibrationContrast, SaidWhereSomeGpuTypesStandUnderAProfileThatAppliesAndOthersOnTheRawModel) {
  // B200's profile (megatron-core-2026-b200) lengthens every GEMM; MI250X has none.
  const std::string b200_mi250x = calibration_contrast({"B200", "MI250X"}, false);
  EXPECT_NE(b200_mi250x.find("B200 (megatron-core-2026-b200) under a calibration profile, MI250X on the raw model"), std::string::npos)
      << b200_mi250x;
  EXPECT_NE(b200_mi250x.find("--calibration none"), std::string::npos) << b200_mi250x;
  // H100's profile holds host times: the MoE layer's, and the one before each pass, which every run
  // pays, dense or MoE.
  for (bool moe : {false, true}) {
    EXPECT_NE(calibration_contrast({"H100-SXM5-80GB", "MI250X"}, moe)
                  .find("H100-SXM5-80GB (megatron-core-2026) under a calibration profile, MI250X on the raw model"),
              std::string::npos);
  }
  // MI300X takes primus-2026's kernel excesses, dense or MoE.
  EXPECT_NE(calibration_contrast({"MI250X", "MI300X"}, false).find("MI300X (primus-2026) under a calibration profile"), std::string::npos);
  // Each under a profile of its own: nothing to say.
  EXPECT_EQ(calibration_contrast({"H100-SXM5-80GB", "MI300X"}, false), "");
  // One status for all: nothing to say.
  EXPECT_EQ(calibration_contrast({"B200"}, false), "");
  EXPECT_EQ(calibration_contrast({"MI300X", "MI355X"}, true), "");
  EXPECT_EQ(calibration_contrast({"MI250X", "MI210"}, true), "");
}

Report one_gpu_report(const std::string& gpu, double peak_bytes) {
  Report r;
  r.feasible = true;
  r.devices.resize(8);
  for (DeviceReport& d : r.devices) {
    d.gpu = gpu;
    d.compute_s = 1;
    d.peak_memory_bytes = 0.5 * peak_bytes;
  }
  r.devices[3].peak_memory_bytes = peak_bytes;
  return r;
}

TEST(MemoryHeadroom, APeakWithinTheMemoryBarOfTheCapacityIsSaidToMaybeNotFit) {
  Cluster c = load_cluster(test::source_dir() / "studies/validation/clusters/dgx-h100-4.yaml");
  const double capacity = c.device_of(3).memory_bytes;
  std::ostringstream close, clear;
  print_error_bars(close, one_gpu_report("H100-SXM5-80GB", 0.995 * capacity), c);
  print_error_bars(clear, one_gpu_report("H100-SXM5-80GB", 0.5 * capacity), c);
  EXPECT_NE(close.str().find("memory: gpu3 (H100-SXM5-80GB) peaks at "), std::string::npos) << close.str();
  EXPECT_NE(close.str().find(" of its capacity (its memory error bar): it may not fit"), std::string::npos) << close.str();
  EXPECT_EQ(close.str().find("gpu0"), std::string::npos) << close.str();  // half full: room to spare
  EXPECT_EQ(clear.str().find("may not fit"), std::string::npos) << clear.str();
  // A GPU no memory class speaks for: the widest bar shipped, said as that, not as its own
  // (audit 2026-12-03: "memory no calibration ..." and then "within the memory error bar").
  Cluster v = test::shipped_cluster("p3-8xlarge-5");
  std::ostringstream v100;
  print_error_bars(v100, one_gpu_report("V100-SXM2-16GB", 0.999 * v.device_of(3).memory_bytes), v);
  EXPECT_NE(v100.str().find("; memory no calibration"), std::string::npos) << v100.str();
  EXPECT_NE(v100.str().find(" of its capacity (no published run measured this GPU type's memory: the widest memory error bar of any other): it may not fit"),
            std::string::npos)
      << v100.str();
}

TEST(TimeErrorBar, ADenseRunOnGpusCalibratedOnlyOnMoeRunsSaysItHasNoBarForThisSetting) {
  // The shipped calibration has B300 MoE rows (within 5.2 %) and no dense B300 row, while dense
  // runs on its sibling GB300 are off by up to 30 %: the MoE bar is not lent to a dense run.
  Cluster c = load_cluster(test::source_dir() / "studies/validation/clusters/dgx-b300-1.yaml");
  std::ostringstream dense, moe;
  Report r = one_gpu_report("B300", 0.1 * c.device_of(0).memory_bytes);
  print_error_bars(dense, r, c);
  r.moe = true;
  r.low_precision_gemms = true;
  r.gemm_format = "mxfp8";
  print_error_bars(moe, r, c);
  EXPECT_NE(dense.str().find("time no calibration for this GPU and setting (its calibration rows are of mixture-of-experts runs only: "
                             "Megatron-Core B300 MoE MXFP8 (held out))"),
            std::string::npos)
      << dense.str();
  EXPECT_NE(moe.str().find("time ±"), std::string::npos) << moe.str();
  EXPECT_NE(moe.str().find("Megatron-Core B300 MoE MXFP8 (held out)"), std::string::npos) << moe.str();
  // The JSON says null where the line says there is no bar.
  r.moe = false;
  EXPECT_TRUE(error_bars_json(r, c).at("time").is_null());
}

TEST(TimeErrorBar, MambaLayersBorrowNoBarOfTimeNorOfMemoryFromTransformerRuns) {
  // A hybrid model's scans are a stated roofline and its memory unmeasured: neither bar is a transformer
  // class's. On H100 its time bar is the hybrid rows' (Nemotron 3 Nano's); on A100 no hybrid model ran.
  Cluster h100 = load_cluster(test::source_dir() / "studies/validation/clusters/dgx-h100-2.yaml");
  Report r = one_gpu_report("H100-SXM5-80GB", 0.1 * h100.device_of(0).memory_bytes);
  r.mamba_layers = r.moe = true;
  std::ostringstream out;
  print_error_bars(out, r, h100);
  EXPECT_NE(out.str().find("time ±"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("H100 hybrid MoE"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("memory no calibration for this setting (Mamba layers: no published run measured their memory)"),
            std::string::npos)
      << out.str();
  EXPECT_TRUE(error_bars_json(r, h100).at("memory").is_null());
  Cluster a100 = load_cluster(test::source_dir() / "studies/validation/clusters/dgx-a100-1.yaml");
  Report on_a100 = one_gpu_report("A100-SXM4-80GB", 0.1 * a100.device_of(0).memory_bytes);
  on_a100.mamba_layers = on_a100.moe = true;
  std::ostringstream none;
  print_error_bars(none, on_a100, a100);
  EXPECT_NE(none.str().find("time no calibration for this setting (Mamba layers"), std::string::npos) << none.str();
  EXPECT_TRUE(error_bars_json(on_a100, a100).at("time").is_null());
}

TEST(TimeErrorBar, EagerKernelsBorrowNoBarFromFusedRuns) {
  // H100 has dense Megatron-Core rows (a time bar); a run of PyTorch's eager kernels is not one of them.
  Cluster c = load_cluster(test::source_dir() / "studies/validation/clusters/dgx-h100-2.yaml");
  Report r = one_gpu_report("H100-SXM5-80GB", 0.1 * c.device_of(0).memory_bytes);
  std::ostringstream fused, eager;
  print_error_bars(fused, r, c);
  ASSERT_NE(fused.str().find("time ±"), std::string::npos) << fused.str();
  r.eager_kernels = true;
  print_error_bars(eager, r, c);
  EXPECT_NE(eager.str().find("time no calibration for this setting (training.kernels eager"), std::string::npos) << eager.str();
  EXPECT_NE(eager.str().find("; memory ±"), std::string::npos) << eager.str();  // memory is the same
  EXPECT_TRUE(error_bars_json(r, c).at("time").is_null());
  EXPECT_FALSE(error_bars_json(r, c).at("memory").is_null());
  EXPECT_EQ(r.to_json().at("training_kernels"), "eager");
}

}  // namespace
}  // namespace hetsim
