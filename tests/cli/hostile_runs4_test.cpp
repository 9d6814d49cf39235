// File: tests/cli/hostile_runs4_test.cpp
// The third attacker's audit's smaller findings (2026-12-05): a compare whose scenario does not fit
// exits 3, and one whose B repeats an option of A's or writes A's trace is refused; a --set or a
// calibrate text that is not UTF-8, a fit's date to the month, a hex-float --measured, a run class
// of any length and a run file given twice are refused at themselves; an unwritable --out or
// --report shows before the minutes of work, not after; and a wrong field is said once, without a
// second, false error after it.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "cli/scratch_dir.hpp"
#include "test_support.hpp"

namespace hetsim {
namespace {

namespace fs = std::filesystem;
using Dir = test::ScratchDir;

using test::cli;

std::string contents(const std::string& path) {
  std::ostringstream s;
  s << std::ifstream(path).rdbuf();
  return s.str();
}

size_t lines(const std::string& s) { return static_cast<size_t>(std::count(s.begin(), s.end(), '\n')); }

const std::string kScenario = "simulate -c a100-v100-2x2 -m gpt3-1.3b --strategy dp-proportional";

TEST(HostileRuns4, ACompareWhoseScenarioDoesNotFitExitsAsInfeasible) {
  // It printed "B is infeasible" and exited 0.
  const test::CliRun r = cli("compare " + kScenario + " --vs --set model.hidden=262144");
  EXPECT_EQ(r.rc, 3) << r.output;
  EXPECT_NE(r.output.find("B is infeasible: gpu0 (A100-SXM4-40GB) needs "), std::string::npos) << r.output;
  EXPECT_EQ(cli("compare " + kScenario + " --vs --set model.layers=12").rc, 0);
}

TEST(HostileRuns4, ACompareWhoseBRepeatsAnOptionOfAOrWritesItsTraceIsRefused) {
  const Dir d;
  test::CliRun r = cli("compare " + kScenario + " --calibration none --vs --calibration shipped");
  EXPECT_EQ(r.rc, 2) << r.output;  // was the option parser's "At Most 1 required but received 2"
  EXPECT_EQ(r.output, "compare: error: scenario B's words are added to A's, and A gives --calibration already; to change it, give B "
                      "whole (starting with simulate or plan)\n");
  const std::string trace = (d.path / "t.json").string();
  r = cli("compare " + kScenario + " --trace " + trace + " --vs --set model.layers=12");
  EXPECT_EQ(r.rc, 2) << r.output;  // B's trace overwrote A's without a word
  EXPECT_EQ(r.output, "compare: error: both scenarios would write their trace to \"" + trace +
                          "\", B's over A's; give B whole (starting with simulate or plan) with a --trace of its own\n");
  EXPECT_FALSE(fs::exists(trace));
  // --set adds up, and B given whole may write its own trace.
  const std::string tb = (d.path / "b.json").string();
  r = cli("compare " + kScenario + " --set model.layers=12 --trace " + trace + " --vs " + kScenario + " --set model.layers=12 --trace " + tb);
  EXPECT_EQ(r.rc, 0) << r.output;
  EXPECT_TRUE(fs::exists(trace) && fs::exists(tb));
}

TEST(HostileRuns4, TextThatIsNotUtf8OrADateToTheMonthOrAHexShareIsRefusedWhereGiven) {
  const Dir d;
  test::CliRun r = cli("simulate --set \"$(printf 'model.name=\\377\\376')\"");  // (sh: no $'...')
  EXPECT_EQ(r.rc, 2) << r.output;  // was "name: has no value"
  EXPECT_EQ(r.output, "--set model.name=\\xFF\\xFE: error: is not UTF-8 text (a bad byte at offset 11)\n");
  const std::string runs = d.write("r.yaml", "- {name: a, source: s, cluster: " +
                                                 (test::source_dir() / "studies/validation/clusters/dgx-h100-1.yaml").string() +
                                                 ", collective: {op: allreduce, size: 1GiB}, measured: {busbw_Bps: 4.7e11}}\n");
  const std::string out = " --out " + (d.path / "p.yaml").string();
  r = cli("calibrate --runs " + runs + " --software s --date 2026-12" + out);
  EXPECT_EQ(r.rc, 2) << r.output;  // its default era then sorted before every YYYY-MM-DD one
  EXPECT_EQ(r.output, "--date: error: \"2026-12\" is not a day; write YYYY-MM-DD (the fit's date)\n");
  r = cli("calibrate --runs " + runs + " --software \"$(printf 's\\303')\"" + out);
  EXPECT_EQ(r.rc, 2) << r.output;  // was written escaped twice, not as typed
  EXPECT_EQ(r.output, "--software: error: is not UTF-8 text; the profile file it is written into must be\n");
  r = cli("calibrate --runs " + runs + " --software s --measured gemm_time_excess=0x0.1p0 --measured-source m" + out);
  EXPECT_EQ(r.rc, 2) << r.output;  // a profile file refuses the same value
  EXPECT_EQ(r.output, "--measured gemm_time_excess=0x0.1p0: error: \"0x0.1p0\" is not a share (a number from 0 to 1)\n");
  EXPECT_FALSE(fs::exists(d.path / "p.yaml"));
}

TEST(HostileRuns4, ARunsClassIsANameAndARunFileIsGivenOnce) {
  const Dir d;
  const std::string cluster = (test::source_dir() / "studies/validation/clusters/dgx-h100-1.yaml").string();
  const std::string row = "- {name: a, source: s, class: CLASS, cluster: " + cluster +
                          ", collective: {op: allreduce, size: 1GiB}, measured: {busbw_Bps: 4.7e11}}\n";
  std::string long_row = row;
  long_row.replace(long_row.find("CLASS"), 5, std::string(300, 'x'));
  const std::string runs_long = d.write("long.yaml", long_row);
  test::CliRun r = cli("validate --runs " + runs_long);
  EXPECT_EQ(r.rc, 2) << r.output;  // printed whole in every table row
  EXPECT_EQ(r.output, runs_long + ":1:31: error: [0].class: has 300 characters; a name is 1 to 256 printable characters\n");
  const std::string runs = d.write("r.yaml", row);
  fs::create_symlink(runs, d.path / "again.yaml");
  r = cli("validate --runs " + runs + " " + runs);
  EXPECT_EQ(r.rc, 2) << r.output;  // each run "named a run of" itself
  EXPECT_EQ(r.output, runs + ": error: --runs: is given twice: give each run file once\n");
  r = cli("validate --runs " + runs + " " + (d.path / "again.yaml").string());
  EXPECT_EQ(r.rc, 2) << r.output;
  EXPECT_EQ(r.output, (d.path / "again.yaml").string() + ": error: --runs: is given twice (also as \"" + runs + "\"): give each run file once\n");
}

TEST(HostileRuns4, AnOutputThatCannotBeWrittenIsSaidBeforeTheWork) {
  const Dir d;
  const std::string runs = d.write("r.yaml", "- {name: a, source: s, cluster: " +
                                                 (test::source_dir() / "studies/validation/clusters/dgx-h100-1.yaml").string() +
                                                 ", collective: {op: allreduce, size: 1GiB}, measured: {busbw_Bps: 4.7e11}}\n");
  // /proc takes no new file, as root or not (a folder's permissions do not stop root).
  test::CliRun r = cli("validate --runs " + runs + " --report /proc/hetsim-report.json");
  EXPECT_EQ(r.rc, 2) << r.output;
  EXPECT_EQ(r.output, "/proc/hetsim-report.json: error: --report: cannot write this file: No such file or directory\n");  // no table first
  r = cli("calibrate --runs " + runs + " --software s --date 2026-12-05 --parameters intra_time_excess --out /proc/hetsim-profile.yaml");
  EXPECT_EQ(r.rc, 2) << r.output;
  EXPECT_EQ(r.output, "/proc/hetsim-profile.yaml: error: --out: cannot write this file: No such file or directory\n");  // before the fit
  // An existing file is probed without being changed, and a new one is not left behind.
  const std::string kept = d.write("kept.json", "before");
  r = cli("validate --runs " + runs + " --report " + kept + " --markdown " + (d.path / "nope" / "t.md").string());
  EXPECT_EQ(r.rc, 2) << r.output;
  EXPECT_EQ(contents(kept), "before");
}

TEST(HostileRuns4, AWrongFieldIsSaidOnceWithoutASecondFalseError) {
  const Dir d;
  // A study's misspelt run: was followed by "strategy and plan go with run: simulate".
  const std::string study = d.write("st.yaml", "name: st\ncluster: a100-v100-2x2\nmodel: gpt3-1.3b\nrun: simulat\nstrategy: dp-even\n");
  test::CliRun r = cli("sweep --dry-run " + study);
  EXPECT_EQ(r.rc, 2) << r.output;
  EXPECT_EQ(r.output, study + ":4:6: error: run: \"simulat\" is not one of: plan, simulate; did you mean \"simulate\"?\n");
  const std::string plan = d.write("st2.yaml", "name: st\ncluster: a100-v100-2x2\nmodel: gpt3-1.3b\nrun: simulate\nplan: \"\"\n");
  r = cli("sweep --dry-run " + plan);
  EXPECT_EQ(r.rc, 2) << r.output;  // was ": no such plan file" beside "simulate needs strategy: NAME or plan: FILE"
  EXPECT_EQ(r.output, plan + ":5:7: error: plan: is empty; give a plan file (found beside the study), or leave the field out\n");
  // A sizing's amortization of 0 s: was followed by "offers to buy need the time ...".
  const std::string sizing = d.write("s.yaml", "name: s\nmodel: gpt3-1.3b\ntrain_samples: 1000\nobjective: [time_to_train, cost]\n"
                                               "budget: {capex: 1000000USD}\noffers:\n  - name: h100\n"
                                               "    node: {gpu: H100-SXM5-80GB, gpus_per_node: 8, intra_node: {fabric: nvswitch, bandwidth: 450GBps, latency: 1us},\n"
                                               "           nic: {count: 8, bandwidth: 400Gbps, latency: 2us}}\n"
                                               "    price: 300000USD\n    power: 10.2kW\n    source: \"test\"\n    max_count: 2\n"
                                               "energy: {price: 0.12USD/kWh, pue: 1.3}\namortization: 0s\n");
  r = cli("size --dry-run " + sizing);
  EXPECT_EQ(r.rc, 2) << r.output;
  EXPECT_EQ(lines(r.output), 1u) << r.output;
  EXPECT_EQ(r.output.rfind(sizing + ":15:15: error: amortization: ", 0), 0u) << r.output;
  // A profile: a transfer that is not a mapping, an empty `measured`, a merge key, a -0.
  const std::string profile = d.write("p.yaml", "name: x\nsoftware: s\nfitted: 2026-11-28\ndevices: [H100-SXM5-80GB]\n"
                                                "transferred_to: [[H200-SXM-141GB, x]]\nparameters:\n"
                                                "  gemm_time_excess: {value: 0.1, uncertainty: 0.01, measured: \"\"}\n"
                                                "  kernel_overhead: {<<: {value: 1us}, uncertainty: 1us}\nfitted_on: [a]\n");
  r = cli("simulate --calibration " + profile);
  EXPECT_EQ(r.rc, 2) << r.output;
  EXPECT_EQ(r.output, profile + ":7:63: error: parameters.gemm_time_excess.measured: is empty; say where the value was measured (file, GPU, "
                                "date), or leave the field out for a fitted value\n" +
                          profile + ":8:20: error: parameters.kernel_overhead.value: missing required field\n" + profile +
                          ":8:21: error: parameters.kernel_overhead: a YAML merge key (<<), which hetsim does not read: write the fields out\n" +
                          profile + ":5:18: error: transferred_to[0]: expected a mapping of fields\n");
  const std::string zero = d.write("z.yaml", "name: z\nsoftware: s\nfitted: 2026-11-28\ndevices: [A100-SXM4-40GB, V100-SXM2-32GB]\n"
                                             "parameters:\n  pass_host: {value: -0us, uncertainty: 10us}\nfitted_on: [a]\n");
  r = cli("simulate --no-upper-bound --calibration " + zero);
  EXPECT_EQ(r.rc, 0) << r.output;
  EXPECT_EQ(r.output.find("-0 s"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("pass_host 0 s"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace hetsim
