// File: tests/kernels_profile/framework_costs_test.cpp
// The pass-overhead fit and the interference curve (kernels_profile/framework_costs.hpp) on
// synthetic rows with known answers, the shipped H100 measurements, and rows that are wrong.
#include "kernels_profile/framework_costs.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "base/input_error.hpp"
#include "test_support.hpp"

namespace hetsim {
namespace {

using test::temp;

TEST(PassOverhead, FitRecoversTheCostsOfARowsExactModel) {
  // forwards = 100 us + mb (40 us + layers 20 us); step = 300 us + mb (100 us + layers 70 us).
  const auto file = temp("steps.csv");
  std::ofstream out(file);
  out << "device,mode,layers,micro_batches,hidden,heads,seq_len,fwd_s,step_s,gpu,driver,clock_mhz,date,library\n";
  for (int layers : {1, 2, 4, 8}) {
    for (int mb : {1, 2, 4, 8}) {
      const double fwd = 100e-6 + mb * (40e-6 + layers * 20e-6), step = 300e-6 + mb * (100e-6 + layers * 70e-6);
      out << "H100-SXM5-80GB,eager," << layers << "," << mb << ",256,4,128," << fwd << "," << step
          << ",H100,13.0,1980,2026-11-27T00:00:00Z,torch\n";
    }
  }
  out.close();
  const std::vector<PassOverheadFit> fits = fit_pass_overheads(file);
  ASSERT_EQ(fits.size(), 1u);
  EXPECT_NEAR(fits[0].fwd_fixed_s, 40e-6, 1e-9);
  EXPECT_NEAR(fits[0].fwd_per_layer_s, 20e-6, 1e-9);
  EXPECT_NEAR(fits[0].bwd_fixed_s, 60e-6, 1e-9);
  EXPECT_NEAR(fits[0].bwd_per_layer_s, 50e-6, 1e-9);
  EXPECT_NEAR(fits[0].step_fixed_s, 300e-6, 1e-9);
  EXPECT_LT(fits[0].median_error, 1e-6);
  std::filesystem::remove(file);
}

TEST(PassOverhead, ShippedH100MeasurementsFitAndGraphsCostLessThanEagerLaunches) {
  const std::vector<PassOverheadFit> fits = fit_pass_overheads(test::source_dir() / "kernels_profile/measured/steps/h100.csv");
  ASSERT_EQ(fits.size(), 2u);  // cuda_graph, eager
  const PassOverheadFit& graph = fits[0].mode == "cuda_graph" ? fits[0] : fits[1];
  const PassOverheadFit& eager = fits[0].mode == "eager" ? fits[0] : fits[1];
  EXPECT_LT(graph.fwd_per_layer_s, eager.fwd_per_layer_s);
  EXPECT_LT(graph.bwd_per_layer_s, eager.bwd_per_layer_s);
  EXPECT_LT(graph.median_error, 0.10);
  EXPECT_LT(eager.median_error, 0.25);  // eager host timing is noisier
}

TEST(PassOverhead, ARowWithFewerForwardsThanItsStepOrOneLayerCountIsRefused) {
  const auto file = temp("bad_steps.csv");
  const std::string header = "device,mode,layers,micro_batches,hidden,heads,seq_len,fwd_s,step_s,gpu,driver,clock_mhz,date,library\n";
  std::ofstream(file) << header << "H100-SXM5-80GB,eager,1,1,256,4,128,0.002,0.001,H100,13.0,1980,2026-11-27T00:00:00Z,torch\n";
  try {
    (void)fit_pass_overheads(file);
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(":2:"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("error: fwd_s:"), std::string::npos) << e.what();
  }
  std::ofstream(file) << header << "H100-SXM5-80GB,eager,1,1,256,4,128,0.001,0.002,H100,13.0,1980,2026-11-27T00:00:00Z,torch\n"
                      << "H100-SXM5-80GB,eager,1,2,256,4,128,0.002,0.004,H100,13.0,1980,2026-11-27T00:00:00Z,torch\n";
  EXPECT_THROW((void)fit_pass_overheads(file), InputError);  // one layer count: f2 cannot be told from f1
  std::filesystem::remove(file);
}

TEST(Interference, CurveIsTheMedianOverShapesAndInterpolatesFromOneAtZero) {
  const auto file = temp("interference.csv");
  std::ofstream out(file);
  out << "device,dtype,m,n,k,channels,gemm_alone_s,gemm_with_s,gemm_slowdown,reduce_alone_s,reduce_with_s,reduce_slowdown,"
         "reduce_gbps_alone,gpu,driver,clock_mhz,date,library\n";
  for (const auto& [ch, slows] : std::vector<std::pair<int, std::vector<double>>>{{8, {1.1, 1.2, 1.6}}, {16, {1.3, 1.4, 1.5}}}) {
    for (double s : slows) {
      out << "H100-SXM5-80GB,bf16,4096,4096,4096," << ch << ",0.001," << 0.001 * s << "," << s << ",0.002,0.004,2,500,H100,13.0,1980,"
          << "2026-11-27T00:00:00Z,cuBLAS\n";
    }
  }
  out.close();
  const std::vector<InterferenceCurve> curves = load_interference(file);
  ASSERT_EQ(curves.size(), 1u);
  ASSERT_EQ(curves[0].points.size(), 2u);
  EXPECT_DOUBLE_EQ(curves[0].points[0].gemm_slowdown, 1.2);
  EXPECT_DOUBLE_EQ(curves[0].points[1].gemm_slowdown, 1.4);
  EXPECT_DOUBLE_EQ(curves[0].gemm_slowdown(0), 1.0);
  EXPECT_NEAR(curves[0].gemm_slowdown(4), 1.1, 1e-12);
  EXPECT_NEAR(curves[0].gemm_slowdown(12), 1.3, 1e-12);
  EXPECT_DOUBLE_EQ(curves[0].gemm_slowdown(64), 1.4);
  // A slowdown that is not the ratio of its times is refused, naming the column.
  std::ofstream(file, std::ios::app) << "H100-SXM5-80GB,bf16,4096,4096,4096,8,0.001,0.002,1.5,0.002,0.004,2,500,H100,13.0,1980,"
                                     << "2026-11-27T00:00:01Z,cuBLAS\n";
  try {
    (void)load_interference(file);
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("error: gemm_slowdown: is not gemm_with_s / gemm_alone_s"), std::string::npos) << e.what();
  }
  std::filesystem::remove(file);
}

TEST(Interference, ShippedH100CurveSlowsGemmsMoreAsTheCollectiveTakesMoreSms) {
  const std::vector<InterferenceCurve> curves = load_interference(test::source_dir() / "kernels_profile/measured/interference/h100.csv");
  ASSERT_EQ(curves.size(), 1u);
  const InterferenceCurve& c = curves[0];
  EXPECT_GT(c.gemm_slowdown(4), 1.0);
  EXPECT_GT(c.gemm_slowdown(32), c.gemm_slowdown(4));
}

}  // namespace
}  // namespace hetsim
