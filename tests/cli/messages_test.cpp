// File: tests/cli/messages_test.cpp
// What the user is told (issue 35, items 8 and 9): an infeasible run exits with 3 and says why
// (a sweep still records it as a result), a symlink loop is called one, and nesting too deep
// says how deep and where.
#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "base/data_dir.hpp"
#include "base/input_error.hpp"
#include "base/yaml_reader.hpp"
#include "studies/sweep/results_db.hpp"
#include "test_support.hpp"

namespace hetsim {
namespace {

namespace fs = std::filesystem;

using test::temp;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(ExitCodes, AnInfeasibleSimulateExitsWithThreeSaysWhyAndWritesItsReport) {
  // gpt3-175b's model state alone is 2.54 TiB: no GPU of the default cluster holds it. It exited 0.
  const fs::path report = temp("infeasible.json");
  const test::CliRun r = test::run_hetsim("simulate --no-upper-bound --model gpt3-175b --report " + report.string(), test::Capture::kStderr);
  EXPECT_EQ(r.rc, 3);
  EXPECT_EQ(r.output.rfind("hetsim: infeasible: gpu0 (A100-SXM4-40GB) needs 2.55 TiB", 0), 0u) << r.output;
  const nlohmann::json j = nlohmann::json::parse(std::ifstream(report));
  EXPECT_FALSE(j.value("feasible", true));
  EXPECT_NE(j.value("infeasible_reason", ""), "");
  fs::remove(report);
}

TEST(ExitCodes, APlanWhereNothingFitsExitsWithThreeAndSaysWhy) {
  const test::CliRun r = test::run_hetsim("plan --no-upper-bound --model gpt3-175b", test::Capture::kStderr);
  EXPECT_EQ(r.rc, 3);
  EXPECT_EQ(r.output, "hetsim: infeasible: no synthesised program fits this model on this cluster; hetsim: no SPMD program fits "
                      "the devices' memory (1 states searched)\n");
}

TEST(ExitCodes, ASweepRecordsAnInfeasibleScenarioAsAResultNotAnError) {
  const fs::path study = temp("study.yaml"), db = temp("study.db");
  std::ofstream(study) << "name: fits\ncluster: a100-v100-2x2\nmodel: gpt3-1.3b\nrun: simulate\nstrategy: dp-even\n"
                          "vary:\n  - set: model.layers\n    values: [24, 1000]\n";
  const test::CliRun r = test::run_hetsim("sweep " + study.string() + " --db " + db.string(), test::Capture::kStdout);
  EXPECT_EQ(r.rc, 0) << r.output;
  EXPECT_NE(r.output.find("ran 2: 1 ok, 1 infeasible, 0 error(s)"), std::string::npos) << r.output;
  const std::vector<ScenarioRow> rows = ResultsDb(db).rows();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].status, "ok");
  EXPECT_EQ(rows[1].status, "infeasible");
  EXPECT_NE(rows[1].error.find("needs"), std::string::npos) << rows[1].error;
  for (const fs::path& p : {study, db, fs::path(db.string() + "-wal"), fs::path(db.string() + "-shm")}) fs::remove(p);
}

TEST(InputFiles, ASymlinkLoopIsCalledOneAndADanglingLinkNamesItsTarget) {
  // Issue 35: both were "no such file" (or "no shipped cluster named ...").
  const fs::path a = temp("loop-a.yaml"), b = temp("loop-b.yaml"), dangling = temp("dangling.yaml");
  fs::create_symlink(b, a);
  fs::create_symlink(a, b);
  fs::create_symlink(temp("nowhere.yaml"), dangling);
  EXPECT_EQ(error_of([&] { (void)resolve_input(a.string(), "topologies", "cluster"); }),
            a.string() + ": error: is a symlink loop (following its links never reaches a file)");
  EXPECT_EQ(error_of([&] { (void)YamlFile::load(b); }), b.string() + ": error: is a symlink loop (following its links never reaches a file)");
  EXPECT_EQ(error_of([&] { (void)resolve_input(dangling.string(), "topologies", "cluster"); }),
            dangling.string() + ": error: is a symlink to \"" + temp("nowhere.yaml").string() + "\", which does not exist");
  const test::CliRun r = test::run_hetsim("simulate --cluster " + a.string(), test::Capture::kStderr);
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.output, a.string() + ": error: is a symlink loop (following its links never reaches a file)\n");
  for (const fs::path& p : {a, b, dangling}) fs::remove(p);
}

TEST(InputFiles, NestingTooDeepSaysHowDeepAndWhere) {
  // Issue 35: yaml-cpp's depth guard said "invalid YAML: bad file"; hetsim's own check printed a
  // field path of 257 "[0]"s.
  const fs::path flow = temp("deep-flow.yaml"), block = temp("deep-block.yaml");
  std::ofstream(flow) << "name: x\nnode_types: " << std::string(5000, '[') << std::string(5000, ']') << "\n";
  {
    std::ofstream out(block);
    out << "name: x\nnode_types:\n";
    for (int i = 1; i < 300; ++i) out << std::string(2 * i, ' ') << "-\n";
  }
  const std::string deep_flow = error_of([&] { (void)YamlFile::load(flow); });
  EXPECT_EQ(deep_flow.rfind(flow.string() + ":2:", 0), 0u) << deep_flow;
  EXPECT_NE(deep_flow.find(": error: invalid YAML: nested 500 or more levels deep (the YAML reader stopped here); an input nests at "
                           "most 256 levels"),
            std::string::npos)
      << deep_flow;
  EXPECT_EQ(error_of([&] { (void)YamlFile::load(block); }),
            block.string() + ":259:515: error: node_types[0][0][0][0][0][0][0]... (249 more levels): nested 257 levels deep here; "
                              "an input nests at most 256 levels (the shipped ones fewer than 10)");
  fs::remove(flow);
  fs::remove(block);
}

TEST(InputFiles, AHetsimDataDirWithoutDataIsRefusedNotEmpty) {
  // A mistyped HETSIM_DATA_DIR read as a folder of no shipped inputs would list nothing and exit 0.
  const test::CliRun r = test::run_hetsim("list models", test::Capture::kStdout);  // unset: the source tree's
  EXPECT_NE(r.output.find("gpt3-1.3b"), std::string::npos) << r.output;
  const test::CliRun bad = test::run_shell("HETSIM_DATA_DIR=/nonexistent-hetsim-data " + test::hetsim_binary() + " -q list models 2>&1");
  EXPECT_EQ(bad.rc, 2) << bad.output;
  EXPECT_EQ(bad.output, "HETSIM_DATA_DIR: error: \"/nonexistent-hetsim-data\" is not a hetsim data folder (it has no "
                 "kernels_profile/devices/); point it at a source tree or an installed PREFIX/share/hetsim, or unset it\n");
}

}  // namespace
}  // namespace hetsim
