// File: tests/studies/calibration_grid_test.cpp
// The size of `hetsim calibrate`'s grid: 4 simulations a parameter and setting, multiplied, so a fit
// of every parameter a training run moves is refused with the names, before the grid is simulated.
#include <gtest/gtest.h>

#include <algorithm>

#include "base/input_error.hpp"
#include "kernels_profile/calibration_profile.hpp"
#include "kernels_profile/cost_model.hpp"
#include "studies/validation/calibration_fit.hpp"
#include "studies/validation/grid_fit.hpp"
#include "studies/validation/run_file.hpp"
#include "test_support.hpp"

namespace hetsim {
namespace {

TEST(CalibrationGrid, MoreThanSixParametersMovingTheRunsAreRefusedNamingThem) {
  // A TP 2 x PP 2 x DP 2 run on one node moves the GEMM and memory-bound shares, the overlap
  // slowdown, the NVLink share, the pass's host time, the kernels' and the collective calls' fixed
  // costs: 4^7 simulations. Asked for all, the fit names them and asks for at most six.
  const std::vector<ValidationRun> runs = load_runs(test::source_dir() / "tests/fixtures/validation/runs.yaml");
  const auto grid = std::find_if(runs.begin(), runs.end(), [](const ValidationRun& r) { return r.name == "gpt-grid-2x2x2"; });
  ASSERT_NE(grid, runs.end());
  CalibrateOptions o;
  o.date = "2026-12-02";
  try {
    (void)fit_calibration({*grid}, CostModel::shipped(), SimOptions{}, o);
    use_shipped_calibrations();
    FAIL() << "fitted every parameter";
  } catch (const InputError& e) {
    use_shipped_calibrations();
    const std::string what = e.what();
    EXPECT_NE(what.find("--parameters: error: "), std::string::npos) << what;
    EXPECT_NE(what.find("7 parameters move these runs (pass_host, gemm_time_excess, memory_bound_time_excess"), std::string::npos) << what;
    EXPECT_NE(what.find("kernel_overhead, collective_latency): the fit's grid would take 4^"), std::string::npos) << what;
    EXPECT_NE(what.find("choose at most 6 with --parameters"), std::string::npos) << what;
  }
  // Asked for two of them, the grid is simulated: whatever the fit says then, it is not the grid's size.
  o.parameters = {"gemm_time_excess", "kernel_overhead"};
  try {
    const CalibrationFit fit = fit_calibration({*grid}, CostModel::shipped(), SimOptions{}, o);
    EXPECT_EQ(fit.profile.parameters.size() + fit.refused.size(), 2u);
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).find("choose at most"), std::string::npos) << e.what();
  }
  use_shipped_calibrations();
}

}  // namespace
}  // namespace hetsim
