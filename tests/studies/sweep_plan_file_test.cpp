// File: tests/studies/sweep_plan_file_test.cpp
// A simulate study's `plan:` file is read before any scenario runs, --dry-run included: a missing
// file is said at the study's `plan:` line, a broken one at its own line, and a plan made for another
// cluster by the plan file's own check.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "base/temp_dir.hpp"
#include "test_support.hpp"

namespace hetsim {
namespace {

namespace fs = std::filesystem;

TEST(SweepPlanFile, IsCheckedBeforeAnythingRunsDryRunIncluded) {
  const TempDir scratch("sweep-plan-test");
  const fs::path& dir = scratch.path();
  const auto study = [&](const std::string& name, const std::string& cluster, const std::string& plan) {
    std::ofstream(dir / name) << "name: s\ncluster: " << cluster << "\nmodel: bert-base\nrun: simulate\nplan: " << plan
                              << "\nvary:\n  - set: model.training.global_batch\n    values: [64, 128]\n";
    return (dir / name).string();
  };
  const test::CliRun emitted = test::run_hetsim("plan -c a100-v100-2x2 -m bert-base --no-upper-bound --emit-plan " +
                                                    (dir / "good.plan.yaml").string(), test::Capture::kStderr);
  ASSERT_EQ(emitted.rc, 0) << emitted.output;
  std::ofstream(dir / "broken.plan.yaml") << "kind: [\n";
  const auto dry = [](const std::string& file) { return test::run_hetsim("sweep " + file + " --dry-run", test::Capture::kStderr); };

  const test::CliRun missing = dry(study("missing.yaml", "a100-v100-2x2", "nothere.plan.yaml"));
  EXPECT_EQ(missing.rc, 2);
  EXPECT_NE(missing.output.find("missing.yaml:5:7: error: plan: "), std::string::npos) << missing.output;
  EXPECT_NE(missing.output.find("nothere.plan.yaml: no such plan file"), std::string::npos) << missing.output;

  const test::CliRun broken = dry(study("broken.yaml", "a100-v100-2x2", "broken.plan.yaml"));
  EXPECT_EQ(broken.rc, 2);
  EXPECT_NE(broken.output.find("broken.plan.yaml:"), std::string::npos) << broken.output;

  const test::CliRun other = dry(study("other.yaml", "a100-8x8", "good.plan.yaml"));
  EXPECT_EQ(other.rc, 2);
  EXPECT_NE(other.output.find("this plan is for \"a100-v100-2x2\", not for the cluster of this run, \"a100-8x8\""), std::string::npos)
      << other.output;

  const test::CliRun good = dry(study("good.yaml", "a100-v100-2x2", "good.plan.yaml"));
  EXPECT_EQ(good.rc, 0) << good.output;
}

}  // namespace
}  // namespace hetsim
