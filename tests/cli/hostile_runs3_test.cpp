// File: tests/cli/hostile_runs3_test.cpp
// From a third attacker's audit (2026-12-04): inputs that ran silently wrong or that one command
// wrote and the next refused are now refused where they are written: a --set of the cluster in a
// sizing's flags, a --set in a study's flags axis of a field another axis varies, a collective run
// of a fraction of a byte, an empty path, and a calibration whose run stays absurdly far off.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "cli/scratch_dir.hpp"
#include "test_support.hpp"

namespace hetsim {
namespace {

namespace fs = std::filesystem;
using Dir = test::ScratchDir;

using test::cli;

TEST(HostileRuns3, ASizingsFlagsMayNotSetTheClusterItBuildsForEachMix) {
  // It replaced every mix's cluster (1 and 2 nodes both ran on 1000), the front still priced 1 node.
  const Dir d;
  const std::string sizing = d.write("s.yaml",
                                     "name: s\nmodel: gpt3-1.3b\ntrain_samples: 1000\nobjective: [time_to_train, cost]\n"
                                     "budget: {rent_per_hour: 100USD/h}\noffers:\n  - name: h100\n"
                                     "    node: {gpu: H100-SXM5-80GB, gpus_per_node: 8, intra_node: {fabric: nvswitch, bandwidth: 450GBps, latency: 1us},\n"
                                     "           nic: {count: 8, bandwidth: 400Gbps, latency: 2us}}\n"
                                     "    rent: 40USD/h\n    power: 10.2kW\n    source: \"test\"\n    max_count: 2\n"
                                     "network: {topology: fat-tree, oversubscription: 1, switch_latency: 1us}\n"
                                     "flags: [\"--set=cluster.node_types[0].count=1000\"]\n");
  const test::CliRun r = cli("size --dry-run " + sizing);
  EXPECT_EQ(r.rc, 2) << r.output;
  EXPECT_EQ(r.output, sizing + ":15:8: error: flags: entry 1 (--set cluster.node_types[0].count) would change every mix's cluster "
                               "alike, which the sizing builds from its offers and counts; edit the offers or the sizing's fields instead\n");
}

TEST(HostileRuns3, AStudysFlagsAxisMayNotSetAFieldASetAxisVaries) {
  // Rows labelled 100 Gbps and 400 Gbps both ran at 1 Gbps.
  const Dir d;
  const std::string study = d.write("st.yaml",
                                    "name: st\ncluster: a100-8x8\nmodel: gpt3-1.3b\nrun: plan\nvary:\n"
                                    "  - set: cluster.node_types[*].nic.bandwidth\n    values: [100Gbps, 400Gbps]\n"
                                    "  - flags: [[], [\"--set=cluster.node_types[0].nic.bandwidth=1Gbps\"]]\n");
  const test::CliRun r = cli("sweep --dry-run " + study + " --db " + (d.path / "x.db").string());
  EXPECT_EQ(r.rc, 2) << r.output;
  EXPECT_EQ(r.output, study + ":8:12: error: vary[1].flags: the flags axis's --set=cluster.node_types[0].nic.bandwidth=1Gbps edits "
                              "cluster.node_types[*].nic.bandwidth, which a set axis varies; one axis per field (list the values in that axis)\n");
  EXPECT_FALSE(fs::exists(d.path / "x.db"));
}

TEST(HostileRuns3, ARunsCollectiveOfAFractionOfAByteAndAnEmptyClusterAreRefusedWhereTheyAre) {
  const Dir d;
  const std::string cluster = (test::source_dir() / "studies/validation/clusters/dgx-h100-1.yaml").string();
  const std::string runs = d.write("r.yaml",
                                   "- {name: a, source: s, cluster: " + cluster + ", collective: {op: allreduce, size: 0.5B}, measured: {busbw_Bps: 1e11}}\n"
                                   "- {name: b, source: s, cluster: " + cluster + ", collective: {op: allreduce, size: 1.5B}, measured: {busbw_Bps: 1e11}}\n"
                                   "- {name: c, source: s, cluster: \"\", collective: {op: allreduce, size: 1GiB}, measured: {busbw_Bps: 1e11}}\n"
                                   "- {name: d, source: s, cluster: " + cluster + ", collective: {op: allreduce, size: 1kb}, measured: {busbw_Bps: 1e11}}\n");
  const test::CliRun r = cli("validate --runs " + runs);
  EXPECT_EQ(r.rc, 2) << r.output;
  const size_t at = cluster.size();
  EXPECT_EQ(r.output, runs + ":1:" + std::to_string(at + 69) + ": error: [0].collective.size: 0.5 bytes is not a whole number of bytes\n" +
                      runs + ":2:" + std::to_string(at + 69) + ": error: [1].collective.size: 1.5 bytes is not a whole number of bytes\n" +
                      runs + ":3:33: error: [2].cluster: is empty; expected a file next to the run file or a shipped name in topologies/\n" +
                      // 1 kilobit, 125 bytes: no whole float, read as 0 elements and 0 GB/s (a -100 % error fed to calibrate)
                      runs + ":4:" + std::to_string(at + 69) + ": error: [3].collective.size: 125 bytes is not a whole number of 4-byte "
                             "elements (nccl-tests' float, its count column): round it to a multiple of 4 bytes\n");
}

TEST(HostileRuns3, CalibrateRefusesARunItLeavesBeyondWhatAProfileHoldsAtItsEntryAndWritesNothing) {
  // One row 200 times too fast beside ten plausible ones: the fit wrote errors of +19 925 % that
  // the profile reader (at most 10 000 %) refused in the next command.
  const Dir d;
  const std::string cluster = (test::source_dir() / "studies/validation/clusters/dgx-a100-1.yaml").string();
  std::string text;
  for (int i = 0; i < 10; ++i) {
    text += "- {name: n" + std::to_string(i) + ", source: s1, cluster: " + cluster +
            ", collective: {op: allreduce, size: 1GiB, group: all}, measured: {busbw_Bps: 229.04e9}}\n";
  }
  text += "- {name: odd, source: s2, cluster: " + cluster + ", collective: {op: allreduce, size: 1GiB, group: all}, measured: {time_s: 4.0e-5}}\n";
  const std::string runs = d.write("r.yaml", text);
  const test::CliRun r = cli("calibrate --runs " + runs + " --software x --date 2026-12-04 --parameters intra_time_excess --out " +
                             (d.path / "o.yaml").string());
  EXPECT_EQ(r.rc, 2) << r.output;
  EXPECT_NE(r.output.find(runs + ":11:3: error: measured: predicted "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(" times the measured figure even fitted: it cannot be of this run (a profile holds errors up to 10000 %)"),
            std::string::npos)
      << r.output;
  EXPECT_FALSE(fs::exists(d.path / "o.yaml"));
}

TEST(HostileRuns3, PathsThatAreEmptyOrNotFilesAreSaidAtTheirField) {
  // They were refused, but without the file, line and field that named them.
  const Dir d;
  const std::string study = d.write("st.yaml", "name: st\ncluster: a100-8x8\nmodel: \"\"\nrun: plan\n");
  test::CliRun r = cli("sweep --dry-run " + study);
  EXPECT_EQ(r.rc, 2) << r.output;
  EXPECT_EQ(r.output, study + ":3:8: error: model: is empty; expected a file next to the study or a shipped model's name\n");
  const std::string missing = d.write("st2.yaml", "name: st\ncluster: a100-8x8\nmodel: nope.yaml\nrun: plan\n");
  r = cli("sweep --dry-run " + missing);  // once, at its line (it was said twice, without one)
  EXPECT_EQ(r.rc, 2) << r.output;
  EXPECT_EQ(r.output.rfind(missing + ":3:8: error: model: no file and no shipped model named \"nope.yaml\"", 0), 0u) << r.output;
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
  const std::string sizing = d.write("s.yaml", "name: s\nmodel: gpt3-1.3b\ntrain_samples: 1000\nobjective: [time_to_train, cost]\n"
                                               "budget: {rent_per_hour: 100USD/h}\noffers: .\n");
  r = cli("size --dry-run " + sizing);
  EXPECT_EQ(r.rc, 2) << r.output;
  EXPECT_NE(r.output.find(sizing + ":6:9: error: offers: \".\" is not a file (an offers file's path is relative to the sizing "
                                   "file's folder)\n"),
            std::string::npos)
      << r.output;
  const std::string cluster = d.write("c.yaml",
                                      "name: c\nnode_types:\n  - {name: n, count: 2, gpu: A100-SXM4-80GB, gpus_per_node: 8, "
                                      "intra_node: {fabric: nvswitch, bandwidth: 300GBps, latency: 1us}, nic: {count: 8, bandwidth: 200Gbps, latency: 2us}}\n"
                                      "network: {topology: graph, graph: nope.yaml, switch_latency: 1us}\n");
  r = cli("simulate --no-upper-bound -m gpt3-1.3b -c " + cluster);
  EXPECT_EQ(r.rc, 2) << r.output;
  EXPECT_EQ(r.output, cluster + ":4:35: error: network.graph: \"nope.yaml\" is not a file (a graph file's path is relative to the "
                                "cluster file's folder)\n");
}

}  // namespace
}  // namespace hetsim
