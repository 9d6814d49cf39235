// File: tests/studies/profile_refit.hpp
// What the shipped-profile tests share: a profile refitted by `hetsim calibrate` with the arguments
// its header records, and the check that it is the shipped file (parameters, runs fitted on, and each
// run's in-sample and left-out errors).
#pragma once

#include <string>

#include <gtest/gtest.h>

#include "base/temp_dir.hpp"
#include "kernels_profile/calibration_profile.hpp"
#include "test_support.hpp"

namespace hetsim::test {

// `hetsim calibrate ARGS --out <scratch>` and the profile it wrote. ARGS is everything but --out.
inline CalibrationProfile refit_profile(const std::string& args) {
  const TempDir dir("profile-refit-test");
  const std::string out = (dir.path() / "refit.yaml").string();
  const CliRun fit = run_hetsim("calibrate " + args + " --out '" + out + "'", Capture::kStdout);
  EXPECT_EQ(fit.rc, 0) << fit.output;
  if (fit.rc != 0) return {};
  return load_calibration_profile(out);
}

// The refit gives what the shipped file records (it keeps six digits a value, four an error).
inline void expect_same_fit(const CalibrationProfile& shipped, const CalibrationProfile& refit) {
  ASSERT_EQ(refit.parameters.size(), shipped.parameters.size());
  for (size_t i = 0; i < refit.parameters.size(); ++i) {
    EXPECT_EQ(refit.parameters[i].name, shipped.parameters[i].name);
    EXPECT_NEAR(refit.parameters[i].value, shipped.parameters[i].value, 1e-5 * shipped.parameters[i].value) << refit.parameters[i].name;
  }
  EXPECT_EQ(refit.fitted_on, shipped.fitted_on);
  ASSERT_EQ(refit.runs.size(), shipped.runs.size());
  for (size_t i = 0; i < refit.runs.size(); ++i) {
    EXPECT_EQ(refit.runs[i].run, shipped.runs[i].run);
    EXPECT_NEAR(refit.runs[i].loso_error, shipped.runs[i].loso_error, 1e-4) << refit.runs[i].run;
    EXPECT_NEAR(refit.runs[i].in_sample_error, shipped.runs[i].in_sample_error, 1e-4) << refit.runs[i].run;
  }
}

}  // namespace hetsim::test
