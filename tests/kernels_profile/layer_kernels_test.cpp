// File: tests/kernels_profile/layer_kernels_test.cpp
// Layers kernel by kernel (kernels_profile/layer_kernels.hpp): the profiler's kernel names as
// hetsim groups them, the shipped H200 rows, and hetsim's prediction grouped the same way.
#include "kernels_profile/layer_kernels.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <numeric>

#include "base/input_error.hpp"
#include "kernels_profile/device.hpp"
#include "test_support.hpp"

namespace hetsim {
namespace {

TEST(LayerKernels, ProfilerKernelNamesGroupByWhatTheyDo) {
  const std::pair<const char*, KernelClass> cases[] = {
      {"nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT", KernelClass::kGemm},
      {"nvjet_sm90_qqtst_128x128_128x6_2x1_v_bz_coopA_algo2_TNT", KernelClass::kGemm},
      {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64", KernelClass::kGemm},
      {"void pytorch_flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<128; 64>>", KernelClass::kAttention},
      {"void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16; float; false>", KernelClass::kNorm},
      {"void at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernelTemplate<c10::BFloat16>", KernelClass::kNorm},
      {"void at::native::vectorized_elementwise_kernel<8; at::native::GeluBackwardCUDAKernelImpl>", KernelClass::kActivation},
      {"void at::native::vectorized_elementwise_kernel<8; at::native::CUDAFunctor_add<c10::BFloat16>>", KernelClass::kResidual},
      {"triton_red_fused_abs_amax_0", KernelClass::kCast},
      {"triton_poi_fused_clone_t_3", KernelClass::kCast},
      {"void at::native::elementwise_kernel<128; 4; at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda>>",
       KernelClass::kCopy},
      {"void at::native::reduce_kernel<128; 4; at::native::ReduceOp<c10::BFloat16>>", KernelClass::kBiasGrad},
      {"void at::native::vectorized_elementwise_kernel<8; at::native::FillFunctor<c10::BFloat16>>", KernelClass::kFill},
      {"Memset (Device)", KernelClass::kFill},
      {"some_custom_kernel", KernelClass::kOther},
  };
  for (const auto& [name, want] : cases) EXPECT_EQ(classify_kernel(name), want) << name;
}

TEST(LayerKernels, ShippedH200RowsSumToTheirPassesAndThePredictionSplitsTheSameWay) {
  // 2026-11-27: 11 bf16/fp16 layers, 4 fp8, fp16 at four more shapes (scripts/measure-gpu + the log);
  // 2026-12-04: 4 bf16 layers and 3 fp8.
  std::vector<LayerKernels> layers =
      load_layer_kernels(test::source_dir() / "kernels_profile/measured/layer-kernels/h200.csv");
  ASSERT_GE(layers.size(), 17u);
  const std::vector<LayerKernels> later =
      load_layer_kernels(test::source_dir() / "kernels_profile/measured/layer-kernels/h200-2026-12-04.csv");
  ASSERT_GE(later.size(), 7u);
  layers.insert(layers.end(), later.begin(), later.end());
  const CostModel cost = CostModel::shipped();
  const Device h200 = load_shipped_device("H200-SXM-141GB", Diagnostic{});
  for (const LayerKernels& lk : layers) {
    SCOPED_TRACE(layer_key(lk.layer));
    EXPECT_FALSE(lk.from_graphs);
    for (int pass = 0; pass < 2; ++pass) {
      const double sum = std::accumulate(lk.measured[pass].begin(), lk.measured[pass].end(), 0.0);
      EXPECT_NEAR(sum, pass == 0 ? lk.layer.fwd_s : lk.layer.bwd_s, 1e-12);
      // every kernel these layers ran has a class (a renamed kernel in a new PyTorch shows up here)
      EXPECT_EQ(lk.measured[pass][static_cast<int>(KernelClass::kOther)], 0.0);
      EXPECT_GT(lk.measured[pass][static_cast<int>(KernelClass::kGemm)], 0.0);
    }
    // hetsim's operator costs, grouped: the classes add up to the layer's predicted passes, and
    // only fp8 layers have casts.
    const LayerPrediction p = predict_layer(lk.layer, h200, cost);
    EXPECT_NEAR(std::accumulate(p.by_class[0].begin(), p.by_class[0].end(), 0.0), p.fwd_s, 1e-12);
    EXPECT_NEAR(std::accumulate(p.by_class[1].begin(), p.by_class[1].end(), 0.0), p.bwd_s, 1e-12);
    const bool fp8 = lk.layer.dtype == DType::kFp8;
    EXPECT_EQ(p.by_class[0][static_cast<int>(KernelClass::kCast)] > 0, fp8);
    EXPECT_EQ(lk.measured[0][static_cast<int>(KernelClass::kCast)] > 0, fp8);
    // PyTorch ran them (training.kernels eager): autograd's bias-gradient sums, the QKV views'
    // fills and copies are predicted in the backward, as measured, and in no forward.
    ASSERT_TRUE(lk.layer.pytorch);
    for (KernelClass k : {KernelClass::kBiasGrad, KernelClass::kFill, KernelClass::kCopy}) {
      EXPECT_GT(p.by_class[1][static_cast<int>(k)], 0) << kernel_class_name(k);
      EXPECT_GT(lk.measured[1][static_cast<int>(k)], 0) << kernel_class_name(k);
      EXPECT_EQ(p.by_class[0][static_cast<int>(k)], 0) << kernel_class_name(k);
    }
  }
}

TEST(LayerMeasurements, EveryShippedLayerFileLoadsAndEachLayerIsPredicted) {
  const CostModel cost = CostModel::shipped();
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(test::source_dir() / "kernels_profile/measured/layers")) {
    if (entry.path().extension() != ".csv") continue;
    SCOPED_TRACE(entry.path().string());
    ++files;
    const std::vector<LayerMeasurement> rows = load_layer_measurements(entry.path());
    ASSERT_FALSE(rows.empty());
    for (const LayerMeasurement& m : rows) {
      // PyTorch's files (with the column attention) are predicted as eager autograd runs them; the
      // CUDA program's as fused, with no copy, bias-gradient or fill kernel
      const LayerPrediction p = predict_layer(m, load_shipped_device(m.device, Diagnostic{}), cost);
      EXPECT_EQ(m.pytorch, m.flash);  // every PyTorch layer here ran flash attention, every CUDA one unfused
      EXPECT_EQ(p.by_class[1][static_cast<int>(KernelClass::kBiasGrad)] > 0, m.pytorch);
      EXPECT_EQ(p.by_class[1][static_cast<int>(KernelClass::kCopy)] > 0, m.pytorch);
      EXPECT_GT(p.fwd_s, 0);
      EXPECT_GT(p.bwd_s, 0);
      // each within a factor of three of what was measured: a unit slip shows here
      EXPECT_LT(std::fabs(std::log(p.fwd_s / m.fwd_s)), std::log(3.0));
      EXPECT_LT(std::fabs(std::log(p.bwd_s / m.bwd_s)), std::log(3.0));
    }
  }
  EXPECT_GE(files, 8);  // h100 and h200: unfused, flash, fp8; the H200 runs of 2026-12-04
}

}  // namespace
}  // namespace hetsim
