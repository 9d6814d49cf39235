// File: tests/cli/calibrate_hold_test.cpp
// `hetsim calibrate --hold NAME=PROFILE`: a parameter held through the fit at the value another
// profile fitted (its uncertainty kept), written with `held_from` naming that profile, and the ways
// a --hold or a `held_from` can be wrong, each refused at its flag or field.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "base/temp_dir.hpp"
#include "kernels_profile/calibration_profile.hpp"
#include "test_support.hpp"

namespace hetsim {
namespace {

namespace fs = std::filesystem;

struct Files {
  TempDir dir{"calibrate-hold"};
  std::string lab, runs, out;
  Files() {
    lab = (dir.path() / "lab.yaml").string();
    std::ofstream(lab) << "name: lab\nsoftware: \"nccl-tests\"\nfitted: 2026-12-02\ndevices: [H100-SXM5-80GB]\n"
                          "parameters:\n  collective_latency: {value: 40us, uncertainty: 2us}\nfitted_on: [a, b]\n";
    const std::string cluster = (test::source_dir() / "studies/validation/clusters/dgx-h100-4.yaml").string();
    runs = (dir.path() / "runs.yaml").string();
    std::ofstream(runs) << "- {name: ar1, source: s1, cluster: " << cluster
                        << ", collective: {op: allreduce, size: 1GiB}, measured: {busbw_Bps: 3.0e11}}\n"
                        << "- {name: ar8, source: s2, cluster: " << cluster
                        << ", collective: {op: allreduce, size: 8GiB}, measured: {busbw_Bps: 3.2e11}}\n";
    out = (dir.path() / "p.yaml").string();
  }
  test::CliRun calibrate(const std::string& more) const {
    return test::run_hetsim_redirected("calibrate --runs '" + runs + "' --software nccl-tests --parameters nic_time_excess --date 2026-12-05 --out '" +
                                       out + "' " + more + " 2>&1");
  }
};

TEST(CalibrateHold, AHeldParameterKeepsTheOtherProfilesValueAndUncertaintyAndNamesIt) {
  const Files f;
  const test::CliRun r = f.calibrate("--hold 'collective_latency=" + f.lab + "'");
  ASSERT_EQ(r.rc, 0) << r.output;
  EXPECT_NE(r.output.find("collective_latency"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("held from lab (lab.yaml, fitted 2026-12-02 on 2 runs of H100-SXM5-80GB), not fitted here"), std::string::npos)
      << r.output;
  const CalibrationProfile p = load_calibration_profile(f.out);
  const FittedParameter* held = nullptr;
  const FittedParameter* fitted = nullptr;
  for (const FittedParameter& x : p.parameters) (x.name == "collective_latency" ? held : fitted) = &x;
  ASSERT_TRUE(held != nullptr && fitted != nullptr);
  EXPECT_EQ(fitted->name, "nic_time_excess");
  EXPECT_TRUE(fitted->held_from.empty());
  EXPECT_DOUBLE_EQ(held->value, 40e-6);
  EXPECT_DOUBLE_EQ(held->uncertainty, 2e-6);
  EXPECT_TRUE(held->measured.empty());
  EXPECT_EQ(held->held_from, "lab (lab.yaml, fitted 2026-12-02 on 2 runs of H100-SXM5-80GB)");
  EXPECT_NE(p.describe().find("collective_latency 40 us ± 2 us (held from lab (lab.yaml"), std::string::npos) << p.describe();
  // The held latency is in force through the fit: the NICs' excess fitted beside it differs from
  // one fitted with the call's latency at 0.
  const CalibrationProfile q = [&] {
    const test::CliRun again = f.calibrate("");
    EXPECT_EQ(again.rc, 0) << again.output;
    return load_calibration_profile(f.out);
  }();
  ASSERT_EQ(q.parameters.size(), 1u);
  EXPECT_LT(fitted->value, q.parameters.front().value);
}

TEST(CalibrateHold, AWrongHoldIsRefusedAtItsFlag) {
  const Files f;
  // Refused with exit 2, saying `said` (empty: anything).
  const auto refused = [&](const std::string& args, const std::string& said) {
    const test::CliRun r = f.calibrate(args);
    EXPECT_EQ(r.rc, 2) << args << "\n" << r.output;
    EXPECT_NE(r.output.find(said), std::string::npos) << r.output;
  };
  refused("--hold collective_latency", "--hold collective_latency: error: is not NAME=PROFILE");
  refused("--hold 'collective_latenc=" + f.lab + "'", "unknown parameter \"collective_latenc\"");
  refused("--hold 'kernel_overhead=" + f.lab + "'", "does not hold \"kernel_overhead\"; it holds collective_latency");
  refused("--measured collective_latency=1us --measured-source m --hold 'collective_latency=" + f.lab + "'",
          "\"collective_latency\" is held twice");
  refused("--hold 'nic_time_excess=" + f.lab + "'", "");  // not in lab: said before it could be both held and fitted
  refused("--hold 'collective_latency=" + f.lab + ".missing'", "lab.yaml.missing");
  EXPECT_FALSE(fs::exists(f.out));
}

TEST(CalibrateHold, SkipLeavesOutRunsByNameAndSaysWhenNoneIsLeft) {
  // (calibrate's run selection, beside --hold: --only keeps runs naming all its texts, --skip drops
  // runs naming any of its own.)
  const Files f;
  const test::CliRun none = f.calibrate("--skip ar");
  EXPECT_EQ(none.rc, 2) << none.output;
  EXPECT_NE(none.output.find("--skip: error: no run name is free of \"ar\""), std::string::npos) << none.output;
  const test::CliRun both = f.calibrate("--only ar1 --skip ar1");
  EXPECT_EQ(both.rc, 2) << both.output;
  EXPECT_NE(both.output.find("--only: error: no run name contains all of \"ar1\" and none of \"ar1\""), std::string::npos)
      << both.output;
  EXPECT_FALSE(fs::exists(f.out));
  // One of the two left: counted, and too few to fit on.
  const test::CliRun one = f.calibrate("--skip ar8");
  EXPECT_EQ(one.rc, 2) << one.output;
  EXPECT_NE(one.output.find("hetsim calibrate: 1 run, fitted"), std::string::npos) << one.output;
  EXPECT_NE(one.output.find("needs more than 1 run that it moves"), std::string::npos) << one.output;
  EXPECT_NE(f.calibrate("").output.find("hetsim calibrate: 2 runs, fitted"), std::string::npos);
}

TEST(CalibrateHold, AHeldFromFieldIsTextAndNeverBesideMeasured) {
  const Files f;
  const auto load = [&](const std::string& param) {
    const std::string file = (f.dir.path() / "bad.yaml").string();
    std::ofstream(file) << "name: lab\nsoftware: s\nfitted: 2026-12-02\ndevices: [H100-SXM5-80GB]\nparameters:\n  " << param
                        << "\nfitted_on: [a]\n";
    return test::run_hetsim("validate --calibration '" + file + "' --runs '" + f.runs + "'", test::Capture::kStderr);
  };
  test::CliRun r = load("collective_latency: {value: 40us, uncertainty: 2us, held_from: \" \"}");
  EXPECT_EQ(r.rc, 2) << r.output;
  EXPECT_NE(r.output.find("bad.yaml:6:"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("held_from: is empty; name the profile whose fitted value is held"), std::string::npos) << r.output;
  r = load("collective_latency: {value: 40us, uncertainty: 2us, measured: \"m\", held_from: \"lab\"}");
  EXPECT_EQ(r.rc, 2) << r.output;
  EXPECT_NE(r.output.find("held_from: beside `measured`"), std::string::npos) << r.output;
  r = load("collective_latency: {value: 40us, uncertainty: 2us, held_from: \"lab (lab.yaml)\"}");
  EXPECT_EQ(r.rc, 0) << r.output;
}

}  // namespace
}  // namespace hetsim
