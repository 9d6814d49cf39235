// File: tests/studies/nccl_profile_test.cpp
// The shipped fabric profile for H100 (kernels_profile/calibrations/nccl-2025-h100.yaml) is what its own
// command makes of its declared runs: refitted here, its share and every run's left-out error come out
// as the file records them.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "base/temp_dir.hpp"
#include "kernels_profile/calibration_profile.hpp"
#include "test_support.hpp"

namespace hetsim {
namespace {

TEST(NcclProfile, RefittedOnItsDeclaredRunsItGivesTheShareAndLeftOutErrorsItRecords) {
  const auto dir_of = test::source_dir() / "kernels_profile/calibrations";
  const CalibrationProfile shipped = load_calibration_profile(dir_of / "nccl-2025-h100.yaml");
  const TempDir dir("nccl-profile-test");
  const std::string out = (dir.path() / "refit.yaml").string();
  const std::string runs = (test::source_dir() / "studies/validation/collectives.yaml").string();
  const test::CliRun fit = test::run_hetsim("calibrate --runs '" + runs + "' --only x8H100 --parameters nic_time_excess --software x " +
                                                "--date 2026-12-05 --out '" + out + "'",
                                            test::Capture::kStdout);
  ASSERT_EQ(fit.rc, 0) << fit.output;
  const CalibrationProfile refit = load_calibration_profile(out);
  ASSERT_EQ(refit.parameters.size(), 1u);
  ASSERT_EQ(shipped.parameters.size(), 1u);
  EXPECT_EQ(refit.parameters[0].name, "nic_time_excess");
  EXPECT_NEAR(refit.parameters[0].value, shipped.parameters[0].value, 1e-5 * shipped.parameters[0].value);
  EXPECT_EQ(refit.fitted_on, shipped.fitted_on);
  ASSERT_EQ(refit.runs.size(), shipped.runs.size());
  ASSERT_EQ(shipped.runs.size(), 7u);  // the rows across 2 and 4 nodes of H100
  for (size_t i = 0; i < refit.runs.size(); ++i) {
    EXPECT_EQ(refit.runs[i].run, shipped.runs[i].run);
    EXPECT_NEAR(refit.runs[i].loso_error, shipped.runs[i].loso_error, 1e-4) << refit.runs[i].run;
    EXPECT_NEAR(refit.runs[i].in_sample_error, shipped.runs[i].in_sample_error, 1e-4) << refit.runs[i].run;
  }
  // Four fabrics, each left out in turn: a positive share (the fabrics deliver less than the NIC class's
  // default fraction), every row within the 10 % target left out, and NVLink SHARP's in-switch rows
  // untouched by NIC time (the same error with the share fitted or not).
  EXPECT_GT(shipped.parameters[0].value, 0.0);
  for (const CrossValidatedRun& r : shipped.runs) {
    EXPECT_LT(std::fabs(r.loso_error), 0.10) << r.run;
    if (r.run == "allreduce-2x8H100-roce-nvls-8GiB" || r.run == "allreduce-2x8H100-xe9680-ib-peak") {
      EXPECT_NEAR(r.loso_error, r.in_sample_error, 1e-4) << r.run;
    }
  }
}

}  // namespace
}  // namespace hetsim
