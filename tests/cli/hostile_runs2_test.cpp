// File: tests/cli/hostile_runs2_test.cpp
// From a second attacker's audit (2026-12-03): terminal escapes typed into an argument are shown,
// never obeyed; calibrate says when leave-one-source-out fitted nothing (one source: its "honest"
// errors were the raw model's, unmarked), and refuses a parameter named twice and --out onto a
// file its runs read, before any simulation.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cli/scratch_dir.hpp"
#include "test_support.hpp"

namespace hetsim {
namespace {

namespace fs = std::filesystem;

using Dir = test::ScratchDir;

// ESC [2J clears a terminal; ESC ] 0;x BEL retitles it. Through printf: /bin/sh has no $'...'.
const std::string kEscape = "\"$(printf '\\033[2J\\033]0;x\\007')\"";

// Two collective runs on one H100 node (0.7 s to fit), of the given sources.
std::string two_runs(const std::string& cluster, const std::string& source_a, const std::string& source_b) {
  return "- {name: r1, source: \"" + source_a + "\", cluster: " + cluster +
         ", collective: {op: allreduce, size: 8GiB, group: all}, measured: {busbw_Bps: 479.72e9}}\n"
         "- {name: r2, source: \"" + source_b + "\", cluster: " + cluster +
         ", collective: {op: allreduce, size: 1GiB, group: all}, measured: {busbw_Bps: 400e9}}\n";
}

TEST(HostileRuns2, EscapesTypedIntoArgumentsAreShownEscapedInParserErrors) {
  for (const std::string& args : {kEscape, "simulate --" + kEscape, "list " + kEscape, "collective --op " + kEscape,
                                  "collective --root " + kEscape}) {
    const test::CliRun r = test::run_shell(test::hetsim_binary() + " " + args + " 2>&1");
    EXPECT_EQ(r.rc, 2) << args << r.output;
    EXPECT_EQ(r.output.find('\033'), std::string::npos) << args << r.output;
    EXPECT_EQ(r.output.find('\007'), std::string::npos) << args << r.output;
    EXPECT_NE(r.output.find("\\x1B[2J\\x1B]0;x\\x07"), std::string::npos) << args << r.output;
    EXPECT_NE(r.output.find("Run with --help for more information.\n"), std::string::npos) << args << r.output;  // lines kept
  }
}

TEST(HostileRuns2, ListWithNothingToListSaysWhatItLists) {
  const test::CliRun r = test::run_hetsim("list", test::Capture::kStderr);
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.output, "hetsim list: error: say what to list: devices, clusters, models or strategies\n");
}

TEST(HostileRuns2, VersionWithAnythingElseIsRefused) {
  // CLI11 answers --version before it reads the rest, so `--version extra` used to exit 0.
  test::CliRun r = test::run_shell(test::hetsim_binary() + " --version extra 2>&1");
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.output, "hetsim: error: --version takes nothing else, got extra\n");
  r = test::run_shell(test::hetsim_binary() + " -q --version 2>&1");
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(r.output.rfind("hetsim ", 0), 0u) << r.output;
}

TEST(HostileRuns2, CalibrateSaysTheProfileItWroteWithItsNameEscaped) {
  const Dir d;
  const std::string runs =
      d.write("runs.yaml", two_runs((test::source_dir() / "studies/validation/clusters/dgx-h100-1.yaml").string(), "x 2026", "y 2026"));
  const std::string out = (d.path / "p").string() + kEscape + ".yaml";
  const test::CliRun r = test::run_shell(test::hetsim_binary() + " -q calibrate --runs " + runs + " --software s --date 2026-12-04 " +
                                         "--parameters intra_time_excess --out " + out + " 2>&1");
  EXPECT_EQ(r.rc, 0) << r.output;
  EXPECT_EQ(r.output.find('\033'), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("wrote " + (d.path / "p").string() + "\\x1B[2J\\x1B]0;x\\x07.yaml ("), std::string::npos) << r.output;
}

TEST(HostileRuns2, CalibrateMarksLeaveOneSourceOutErrorsOfAFoldThatFittedNothing) {
  const Dir d;
  const std::string cluster = (test::source_dir() / "studies/validation/clusters/dgx-h100-1.yaml").string();
  const std::string one = d.write("one.yaml", two_runs(cluster, "x 2026", "x 2026"));
  const std::string two = d.write("two.yaml", two_runs(cluster, "x 2026", "y 2026"));
  const std::string tail = " --software s --date 2026-12-04 --parameters intra_time_excess --out " + (d.path / "o.yaml").string();
  // One campaign (your own cluster's sweep) still calibrates, but its loso column is the raw model's.
  test::CliRun r = test::run_hetsim_redirected("calibrate --runs " + one + tail + " 2>&1");
  EXPECT_EQ(r.rc, 0) << r.output;
  EXPECT_NE(r.output.find("%* x 2026\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("  * every run is of one source (\"x 2026\"): leaving it out leaves no run to fit on, so the\n"
                          "    loso errors are the unfitted model's, not a test of this fit;"),
            std::string::npos)
      << r.output;
  const std::string profile = test::run_shell("cat " + (d.path / "o.yaml").string()).output;
  EXPECT_NE(profile.find("{run: \"r1\", source: \"x 2026\", in_sample_error: -0.0824, loso_error: 0.0017, loso_unfitted: true}"),
            std::string::npos)
      << profile;
  // Two campaigns: each fold fits on the other's run; nothing marked, and the profile reads back.
  r = test::run_hetsim_redirected("calibrate --runs " + two + tail + " 2>&1");
  EXPECT_EQ(r.rc, 0) << r.output;
  EXPECT_EQ(r.output.find("%*"), std::string::npos) << r.output;
  EXPECT_EQ(test::run_shell("grep -c loso_unfitted " + (d.path / "o.yaml").string()).output, "0\n");
  r = test::run_hetsim_redirected("collective -c " + cluster + " --size 1GiB --calibration " + (d.path / "o.yaml").string() + " 2>&1");
  EXPECT_EQ(r.rc, 0) << r.output;
}

TEST(HostileRuns2, CalibrateRefusesATwiceNamedParameterAndAnOutputItsRunsReadBeforeAnySimulation) {
  const Dir d;
  const fs::path shipped = test::source_dir() / "studies/validation/clusters/dgx-h100-1.yaml";
  fs::copy_file(shipped, d.path / "c.yaml");
  const std::string two = d.write("two.yaml", two_runs("c.yaml", "x 2026", "y 2026"));
  const std::string tail = " --software s --date 2026-12-04 --out " + (d.path / "o.yaml").string() + " 2>&1";
  test::CliRun r = test::run_hetsim_redirected("calibrate --runs " + two + " --parameters intra_time_excess intra_time_excess" + tail);
  EXPECT_EQ(r.rc, 2) << r.output;
  EXPECT_NE(r.output.find("--parameters: error: \"intra_time_excess\" is named twice"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(d.path / "o.yaml"));
  // --out onto the cluster the runs read: refused before the fit (no bar, no table), the file kept.
  const std::string before = test::run_shell("cat " + (d.path / "c.yaml").string()).output;
  r = test::run_shell(test::hetsim_binary() + " calibrate --runs " + two + " --software s --out " + (d.path / "c.yaml").string() + " 2>&1");
  EXPECT_EQ(r.rc, 2) << r.output;
  EXPECT_NE(r.output.find("a run's cluster"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("fitted on"), std::string::npos) << r.output;
  EXPECT_EQ(test::run_shell("cat " + (d.path / "c.yaml").string()).output, before);
}

TEST(HostileRuns2, ACustomYamlTagUtf16TextAndNulBytesAreRefusedWhereTheyAre) {
  const Dir d;
  // yaml-cpp read "!foo 3" as 3 and decoded UTF-16 silently; a NUL byte ended a key.
  const std::string tag = d.write("tag.yaml", "name: x\nnodes: !foo 3\n");
  const std::string u16 = d.write("u16.yaml", std::string("\xFF\xFEn\0a\0m\0e\0:\0 \0x\0\n\0", 18));
  const std::string nul = d.write("nul.yaml", std::string("name: x\nfo\0o: 1\n", 17));
  const std::string core = d.write("core.yaml", "name: !!str x\n");  // the core schema's tags read as usual
  test::CliRun r = test::run_hetsim("simulate -c " + tag, test::Capture::kStderr);
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.output, tag + ":2:8: error: nodes: a YAML tag (!foo) that hetsim does not read; leave it out\n");
  r = test::run_hetsim("simulate -c " + u16, test::Capture::kStderr);
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.output, u16 + ": error: starts with a UTF-16 or UTF-32 byte-order mark; hetsim reads every input as UTF-8: save it as UTF-8\n");
  r = test::run_hetsim("simulate -c " + nul, test::Capture::kStderr);
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.output, nul + ":2:3: error: a NUL byte: not a text file, or UTF-16 or UTF-32 text; hetsim reads every input as UTF-8\n");
  r = test::run_hetsim("simulate -c " + core, test::Capture::kStderr);
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.output.find("tag"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("node_types: missing required field"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace hetsim
