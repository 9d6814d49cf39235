// File: tests/cli/audit_inputs_test.cpp
// Inputs an attacker's audit found accepted, counted twice or misreported (2026-12-03): each is now
// refused as bad input (exit 2, the file, line and field named) or read as it was meant.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "base/temp_dir.hpp"
#include "test_support.hpp"

namespace hetsim {
namespace {

namespace fs = std::filesystem;

class AuditInputs : public ::testing::Test {
 protected:
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(dir_.path() / name, std::ios::binary) << text;
    return (dir_.path() / name).string();
  }
  static std::string cluster() { return (test::source_dir() / "studies/validation/clusters/dgx-a100-1.yaml").string(); }
  // A bad input: exit 2 and `message` at `where` (file:line:col: error: ...).
  static void refused(const std::string& args, const std::string& where_and_message) {
    const test::CliRun r = test::run_hetsim(args, test::Capture::kStderr);
    EXPECT_EQ(r.rc, 2) << args << "\n" << r.output;
    EXPECT_NE(r.output.find(where_and_message), std::string::npos) << args << "\n" << r.output;
  }
  TempDir dir_{"audit-inputs"};
};

TEST_F(AuditInputs, ARunGivenTwiceIsRefusedNotCountedTwice) {
  const std::string runs = write("runs.yaml", "- name: ar-32k\n  source: a\n  cluster: " + cluster() +
                                                  "\n  collective: {op: allreduce, size: 32KiB, group: all}\n  measured: {busbw_Bps: 1.0e9}\n");
  const std::string other = write("other.yaml", "- name: ar-32k\n  source: b\n  cluster: " + cluster() +
                                                    "\n  collective: {op: allreduce, size: 1GiB, group: all}\n  measured: {busbw_Bps: 229e9}\n");
  refused("validate --runs " + runs + " " + other, other + ":1:3: error: name: \"ar-32k\" names a run of " + runs + ":1 too");
  refused("calibrate --runs " + runs + " " + runs + " --software x --parameters collective_latency --out " + (dir_.path() / "p.yaml").string(),
          runs + ": error: --runs: is given twice: give each run file once");  // (said of the file, not of each of its runs)
}

TEST_F(AuditInputs, AMeasuredParameterIsNamedWithAValueInItsRangeAndWhereItWasMeasured) {
  const std::string runs = write("runs.yaml", "- name: ar-32k\n  source: a\n  cluster: " + cluster() +
                                                  "\n  collective: {op: allreduce, size: 32KiB, group: all}\n  measured: {busbw_Bps: 1.0e9}\n");
  const std::string head = "calibrate --runs " + runs + " --software x --out " + (dir_.path() / "p.yaml").string() + " ";
  refused(head + "--measured pass_host=842us", "--measured: error: needs --measured-source");
  refused(head + "--measured-source steps.csv", "--measured-source: error: says where values were measured, but no --measured");
  refused(head + "--measured pass_host --measured-source s", "--measured pass_host: error: is not NAME=VALUE");
  refused(head + "--measured pass_hots=1ms --measured-source s", "unknown parameter \"pass_hots\"");
  refused(head + "--measured pass_host=1parsec --measured-source s", "--measured pass_host=1parsec: error:");
  refused(head + "--measured pass_host=51ms --measured-source s", "is over 50 ms");
  refused(head + "--measured gemm_time_excess=-1 --measured-source s", "is not a share");
  refused(head + "--measured pass_host=1ms --measured pass_host=2ms --measured-source s", "\"pass_host\" is measured twice");
}

TEST_F(AuditInputs, AProfilesRunsAreItsFittedOnesOnceEachWithPossibleErrors) {
  const std::string head = "name: t\nsoftware: \"x\"\nfitted: 2026-11-28\ndevices: [A100-SXM4-40GB]\n"
                           "parameters:\n  gemm_time_excess: {value: 0.1, uncertainty: 0.01}\n";
  const auto simulate = [](const std::string& profile) { return "simulate --no-upper-bound -m bert-base --calibration " + profile; };
  const std::string twice = write("twice.yaml", head + "fitted_on: [a, a]\n");
  refused(simulate(twice), twice + ":7:12: error: fitted_on: \"a\" is listed twice");
  const std::string stranger = write("stranger.yaml", head + "fitted_on: [a]\nruns:\n  - {run: b, source: s, in_sample_error: 0.1, loso_error: 0.1}\n");
  refused(simulate(stranger), "runs[0].run: \"b\" is not in fitted_on");
  const std::string below = write("below.yaml", head + "fitted_on: [a]\nruns:\n  - {run: a, source: s, in_sample_error: 0.1, loso_error: -1.5}\n");
  refused(simulate(below), "runs[0].loso_error: -1.5 is out of range; expected -1 to 100");
  std::string empty = head;
  empty.replace(empty.find("\"x\""), 3, "\"\"");
  const std::string nameless = write("nameless.yaml", empty + "fitted_on: [a]\n");
  refused(simulate(nameless), nameless + ":2:11: error: software: is empty");
  // Just over a bound is said as written, not rounded onto the bound ("50 ms is over 50 ms").
  const std::string over = write("over.yaml", "name: t\nsoftware: \"x\"\nfitted: 2026-11-28\ndevices: [A100-SXM4-40GB]\n"
                                              "parameters:\n  pass_host: {value: 50.0000001ms, uncertainty: 1ms}\nfitted_on: [a]\n");
  refused(simulate(over), "pass_host.value: 0.0500000001 s is over 50 ms");
}

TEST_F(AuditInputs, ARunsSourceAndClassAreNotEmptyAndALayersTpSplitsWholeHeads) {
  const std::string runs = write("runs.yaml", "- name: a\n  source: \"\"\n  cluster: " + cluster() +
                                                  "\n  collective: {op: allreduce, size: 32KiB, group: all}\n  measured: {busbw_Bps: 1.0e9}\n"
                                                  "- name: b\n  source: s\n  class: \"\"\n  cluster: " + cluster() +
                                                  "\n  collective: {op: allreduce, size: 32KiB, group: all}\n  measured: {busbw_Bps: 1.0e9}\n");
  refused("validate --runs " + runs, runs + ":2:11: error: [0].source: is empty");
  refused("validate --runs " + runs, runs + ":8:10: error: [1].class: is empty");
  const std::string layer = write("layer.yaml", "- name: l\n  source: s\n  cluster: " + cluster() +
                                                    "\n  layer: {model: bert-base, tp: 8, micro_batch: 4}\n  measured: {forward_s: 0.001}\n");
  refused("validate --runs " + layer, "[0].layer.tp: tp 8 does not divide the model's 12 attention heads");
}

TEST_F(AuditInputs, AModelWithOldMacLineEndsIsReadLineByLine) {
  std::ifstream in(test::source_dir() / "workloads/bert-base.yaml", std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (char& c : text) c = c == '\n' ? '\r' : c;
  const std::string cr = write("bert-cr.yaml", text);
  const test::CliRun r = test::run_hetsim("simulate --no-upper-bound -c a100-v100-2x2 -m " + cr, test::Capture::kStdout);
  EXPECT_EQ(r.rc, 0) << r.output;
  const test::CliRun lf = test::run_hetsim("simulate --no-upper-bound -c a100-v100-2x2 -m bert-base", test::Capture::kStdout);
  const auto line = [](const std::string& out) { return out.substr(out.find("iteration time:"), out.find('\n', out.find("iteration time:")) - out.find("iteration time:")); };
  ASSERT_NE(r.output.find("iteration time:"), std::string::npos) << r.output;
  EXPECT_EQ(line(r.output), line(lf.output));
}

TEST_F(AuditInputs, APlanOfAnUnknownKindListsBothKinds) {
  const std::string plan = write("typo.yaml", "kind: hybird\nmodel: gpt3-1.3b\n");
  refused("simulate --no-upper-bound -m gpt3-1.3b --plan " + plan, plan + ":1:7: error: kind: \"hybird\" is not one of: spmd, hybrid");
}

}  // namespace
}  // namespace hetsim
