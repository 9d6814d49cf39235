// File: tests/studies/primus_profile_test.cpp
// The shipped AMD profile (kernels_profile/calibrations/primus-2026.yaml) is what its own command
// makes of its declared runs: refitted here, its parameters and every run's left-out error come out
// as the file records them. A change to the model that moves these runs fails here until the
// profile is refitted (its header gives the command) and the docs' figures with it.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "kernels_profile/calibration_profile.hpp"
#include "profile_refit.hpp"
#include "test_support.hpp"

namespace hetsim {
namespace {

TEST(PrimusProfile, RefittedOnItsDeclaredRunsItGivesTheParametersAndLeftOutErrorsItRecords) {
  const CalibrationProfile shipped = load_calibration_profile(test::source_dir() / "kernels_profile/calibrations/primus-2026.yaml");
  const std::string runs = (test::source_dir() / "studies/validation").string();
  const CalibrationProfile refit = test::refit_profile("--runs '" + runs + "/primus-mi325x.yaml' '" + runs +
                                                       "/primus.yaml' --parameters gemm_time_excess memory_bound_time_excess "
                                                       "--software x --date 2026-12-03");
  test::expect_same_fit(shipped, refit);
  // The MI325X rows' fold keeps the one MI355X row for two parameters, too few to fit them: it fits
  // nothing, and those rows keep the raw model's error (about +15 to +21 %, too fast). The MI355X row
  // is predicted from the three MI325X rows alone, across GPU generations: within the 6.4 % the docs
  // state (5.9 % until the MoE router fork's gradient sum was counted, 2026-12-04), and not within 1 %
  // (a fold that saw its own row would be).
  for (const CrossValidatedRun& r : shipped.runs) {
    const bool mi325x = r.run.find("mi325x") != std::string::npos;
    EXPECT_EQ(r.loso_unfitted, mi325x) << r.run;
    if (mi325x) {
      EXPECT_GT(r.loso_error, 0.1) << r.run;
    } else {
      EXPECT_LT(std::fabs(r.loso_error), 0.065) << r.run;
      EXPECT_GT(std::fabs(r.loso_error), 0.01) << r.run;
    }
  }
}

}  // namespace
}  // namespace hetsim
