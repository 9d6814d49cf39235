// File: tests/studies/nccl_profile_test.cpp
// The shipped fabric profile for H100 (kernels_profile/calibrations/nccl-2025-h100.yaml) is what its own
// command makes of its declared runs: refitted here, its share and every run's left-out error come out
// as the file records them.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "kernels_profile/calibration_profile.hpp"
#include "profile_refit.hpp"
#include "test_support.hpp"

namespace hetsim {
namespace {

TEST(NcclProfile, RefittedOnItsDeclaredRunsItGivesTheShareAndLeftOutErrorsItRecords) {
  const CalibrationProfile shipped = load_calibration_profile(test::source_dir() / "kernels_profile/calibrations/nccl-2025-h100.yaml");
  const std::string runs = (test::source_dir() / "studies/validation/collectives.yaml").string();
  const CalibrationProfile refit =
      test::refit_profile("--runs '" + runs + "' --only x8H100 --parameters nic_time_excess --software x --date 2026-12-05");
  test::expect_same_fit(shipped, refit);
  ASSERT_EQ(shipped.parameters.size(), 1u);
  EXPECT_EQ(shipped.parameters[0].name, "nic_time_excess");
  ASSERT_EQ(shipped.runs.size(), 7u);  // the rows across 2 and 4 nodes of H100
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
