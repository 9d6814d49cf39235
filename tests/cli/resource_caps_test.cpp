// File: tests/cli/resource_caps_test.cpp
// Resource limits (issue 35, items 5 and 6): input sizes are capped with messages that say the
// limit, studies are expanded one scenario at a time, and a run under an address-space limit
// (ulimit -v) either finishes with the same time or stops with a resource error (exit 2), never
// with SimGrid's "Failed to allocate stack" backtrace or an internal error.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <regex>

#include "asan.hpp"
#include "test_support.hpp"

namespace hetsim {
namespace {

namespace fs = std::filesystem;

using test::temp;

// `hetsim -q ARGS` under `ulimit -v KIB` (0: none), with its stdout and stderr captured together.
test::CliRun run_limited(long kib, const std::string& args) {
  const std::string limit = kib > 0 ? "ulimit -v " + std::to_string(kib) + "; " : "";
  return test::run_shell("(" + limit + "exec " + test::hetsim_binary() + " -q " + args + ") 2>&1");
}

std::string iteration_time(const std::string& summary) {
  std::smatch m;
  return std::regex_search(summary, m, std::regex("iteration time: [^\n]*")) ? m.str() : "";
}

TEST(ResourceCaps, ASetOverTheCapIsRefusedWithItsSizeAndNotRepeated) {
  // 20 000 list items once took 1.4 GB (each node the value wrote held its own copy of the --set).
  std::string items;
  for (int i = 0; i < 20000; ++i) items.append(i ? "," : "").append(std::to_string(i));
  const std::string value = "[" + items + "]";
  const test::CliRun r = test::run_hetsim("simulate --no-upper-bound --set 'cluster.node_types[0].nic.bandwidth=" + value + "'",
                                          test::Capture::kStderr);
  EXPECT_EQ(r.rc, 2);
  const std::string arg = "cluster.node_types[0].nic.bandwidth=" + value;
  EXPECT_EQ(r.output, "--set " + arg.substr(0, 60) + "... (" + std::to_string(arg.size()) + " characters): error: has " +
                          std::to_string(arg.size()) + " characters; a --set is at most 65536 (edit a copy of the file for a larger change)\n");
}

TEST(ResourceCaps, AMillionScenarioStudyIsCheckedInLittleMemory) {
  // Its scenarios were made all at once: 1 000 000 lists of edits and axis values took ~1 GB
  // before anything ran. Now one at a time: the dry run fits in 600 MB of address space.
  const fs::path study = temp("million.yaml");
  {
    std::ofstream out(study);
    out << "name: million\ncluster: a100-v100-2x2\nmodel: gpt3-1.3b\nrun: simulate\nstrategy: dp-even\nvary:\n";
    for (const char* field : {"cluster.name", "model.name"}) {
      out << "  - set: " << field << "\n    values: [";
      for (int i = 0; i < 1000; ++i) out << (i ? ", " : "") << "n" << i << "-" << std::string(80, 'x');
      out << "]\n";
    }
  }
#if HETSIM_TEST_ASAN
  const long kib = 0;  // AddressSanitizer maps terabytes of shadow memory: no address-space limit
#else
  const long kib = 600000;
#endif
  const test::CliRun r = run_limited(kib, "sweep --dry-run " + study.string());
  EXPECT_EQ(r.rc, 0) << r.output;
  EXPECT_EQ(r.output, "study million: 1000000 scenario(s), checked; nothing run (--dry-run)\n");
  fs::remove(study);
}

TEST(ResourceCaps, AStudyValueOverTheCapIsRefusedWhereItIs) {
  const fs::path study = temp("big-value.yaml");
  std::ofstream(study) << "name: big\ncluster: a100-v100-2x2\nmodel: gpt3-1.3b\nrun: simulate\nstrategy: dp-even\nvary:\n"
                          "  - set: cluster.name\n    values: [a, " << std::string(70000, 'b') << "]\n";
  const test::CliRun r = test::run_hetsim("sweep --dry-run " + study.string(), test::Capture::kStderr);
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.output, study.string() + ":8:17: error: vary[0].values[1]: makes a --set of 70013 characters; at most 65536 "
                                       "(edit a copy of the file for a larger change)\n");
  fs::remove(study);
}

TEST(ResourceCaps, AClusterOfMillionsOfGpusIsRefusedAtLoadNamingTheCount) {
  // The fixture's message is checked by BadInputs; here: refused at once, before any per-GPU work
  // (it ran 29 s, then std::bad_alloc).
  const fs::path file = test::source_dir() / "tests/fixtures/bad/cluster_too_many_gpus_issue35.yaml";
  const auto t0 = std::chrono::steady_clock::now();
  const test::CliRun r = test::run_hetsim("simulate --no-upper-bound --cluster " + file.string(), test::Capture::kStderr);
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.output.find(":6:12: error: node_types[0].count: 100000 nodes of 64 GPUs bring the cluster to 6400000 GPUs; "
                          "hetsim simulates at most 131072"),
            std::string::npos)
      << r.output;
  EXPECT_LT(wall_s, 10.0);
}

TEST(ResourceCaps, AValidationRunOfMillionsOfGpusIsRefusedAtItsNodes) {
  // A run's nodes: replaces its cluster's count after the cluster's own check.
  const fs::path runs = temp("runs.yaml");
  std::ofstream(runs) << "- name: huge\n  source: test\n  cluster: a100-8x8\n  nodes: 1000000\n"
                         "  collective: {op: allreduce, size: 1GiB, group: 0-7}\n  measured: {busbw_Bps: 230e9}\n";
  const test::CliRun r = test::run_hetsim("validate --runs " + runs.string(), test::Capture::kStderr);
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.output, runs.string() + ":4:10: error: [0].nodes: 1000000 nodes of 8 GPUs make 8000000 GPUs; hetsim simulates at most 131072\n");
  fs::remove(runs);
}

TEST(ResourceCaps, AYamlFileOverTwoMibIsRefusedBeforeItIsParsed) {
  // A 4 MB cluster file of two million values took 5.6 GB and 15 s to refuse (yaml-cpp holds
  // ~470 bytes a value); now it is refused by its size, in little memory.
  const fs::path big = temp("big.yaml");
  {
    std::ofstream out(big);
    out << "name: x\nnode_types: [1";
    for (int i = 0; i < 2000000; ++i) out << ",1";
    out << "]\n";
  }
#if HETSIM_TEST_ASAN
  const long kib = 0;
#else
  const long kib = 600000;
#endif
  const test::CliRun r = run_limited(kib, "simulate --no-upper-bound --cluster " + big.string());
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.output, big.string() + ": error: is over 2097152 bytes; an input file is at most 2 MiB (the largest hetsim writes is "
                                     "under 0.5 MB)\n");
  fs::remove(big);
}

TEST(ResourceCaps, AListOfMoreMappingsThanACapIsRefusedAsOneProblem) {
  // 131 073 node types ({} each): each was read (~1 KB) and reported missing its 8 fields.
  const fs::path many = temp("many.yaml");
  {
    std::ofstream out(many);
    out << "name: x\nnode_types: [{}";
    for (int i = 0; i < 131072; ++i) out << ", {}";
    out << "]\nnetwork: {topology: single-switch, switch_latency: 1us}\n";
  }
  const test::CliRun r = test::run_hetsim("simulate --no-upper-bound --cluster " + many.string(), test::Capture::kStderr);
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.output, many.string() + ":2:13: error: node_types: has 131073 entries; a list of mappings holds at most 131072\n");
  fs::remove(many);
}

TEST(ResourceCaps, UnderAnAddressSpaceLimitARunGivesTheSameTimeOrAResourceError) {
#if HETSIM_TEST_ASAN
  GTEST_SKIP() << "AddressSanitizer maps terabytes of shadow memory: no address-space limit can hold it";
#endif
  // 4096 GPUs: the gradient all-reduce's 4096 concurrent flows run between relay actors, 256
  // stacks of 8 MiB (2 GiB of address space). Under a 1 GB limit SimGrid aborted with "Failed to
  // allocate stack"; now the actors fit the space left (the flows run host to host: the same time).
  const std::string args = "simulate --no-upper-bound --model gpt3-1.3b --cluster " +
                           (test::source_dir() / "tests/fixtures/clusters/a100-4096.yaml").string();
  const test::CliRun free_run = run_limited(0, args);
  ASSERT_EQ(free_run.rc, 0) << free_run.output;
  const test::CliRun limited = run_limited(1000000, args);
  EXPECT_EQ(limited.rc, 0) << limited.output;
  EXPECT_EQ(iteration_time(limited.output), iteration_time(free_run.output));
  EXPECT_NE(iteration_time(free_run.output), "");
  // Far less space: a resource error naming the limit, whichever allocation fails first.
  const test::CliRun starved = run_limited(120000, args);
  EXPECT_EQ(starved.rc, 2) << starved.output;
  EXPECT_NE(starved.output.find("ulimit -v 120000: error: "), std::string::npos) << starved.output;
  EXPECT_NE(starved.output.find("raise"), std::string::npos) << starved.output;
  EXPECT_EQ(starved.output.find("internal error"), std::string::npos) << starved.output;
  EXPECT_EQ(starved.output.find("Backtrace"), std::string::npos) << starved.output;
}

TEST(ResourceCaps, CollectiveCountsBeyondThirtyTwoBitsArePrintedWhole) {
  // 2^34 samples of a small MoE model, SPMD: 2^31 all-to-alls per iteration were printed as
  // -2147483648 (a 32-bit counter), 2^35 samples as 0.
  const fs::path model = temp("moe-small.yaml");
  std::ofstream(model) << "name: moe-small\nfamily: llama\nlayers: 8\nhidden: 1024\nheads: 16\nffn_hidden: 4096\nseq_len: 2048\n"
                          "vocab: 32000\nmoe: {experts: 8, top_k: 2, expert_ffn_hidden: 1024}\n"
                          "training: {global_batch: 64, micro_batch: 1, dtype: bf16, attention: flash}\n";
  const std::string args = "plan --no-pipeline --no-upper-bound -m " + model.string() + " -c " +
                           (test::source_dir() / "tests/fixtures/clusters/dgx-h100-16.yaml").string();
  const test::CliRun r = run_limited(0, args + " --set model.training.global_batch=17179869184");
  EXPECT_EQ(r.rc, 0) << r.output;
  EXPECT_NE(r.output.find("all-to-all 2147483648 ("), std::string::npos) << r.output;
  const test::CliRun twice = run_limited(0, args + " --set model.training.global_batch=34359738368");
  EXPECT_NE(twice.output.find("all-to-all 4294967296 ("), std::string::npos) << twice.output;
  fs::remove(model);
}

TEST(ResourceCaps, AMachineLimitStopsThePlannerRatherThanChangeItsChoice) {
#if HETSIM_TEST_ASAN
  GTEST_SKIP() << "AddressSanitizer maps terabytes of shadow memory: no address-space limit can hold it";
#endif
  // Qwen3-30B-A3B on 16 H100: judging the hybrid candidates needs 513 actor stacks, which a 4 GB
  // address space cannot hold. The planner once took that for "the hybrid plans do not fit" and
  // chose an SPMD plan 2.3x slower, exit 0: its answer depended on the machine. Now a resource error.
  const test::CliRun r = run_limited(4000000, "plan --no-upper-bound -m qwen3-30b-a3b -c " +
                                                  (test::source_dir() / "tests/fixtures/clusters/dgx-h100-16.yaml").string());
  EXPECT_EQ(r.rc, 2) << r.output;
  EXPECT_EQ(r.output.rfind("ulimit -v 4000000: error: this simulation needs up to ", 0), 0u) << r.output;
  EXPECT_EQ(r.output.find("chosen"), std::string::npos) << r.output;
}

TEST(ResourceCaps, AScenarioStoppedByAMachineLimitIsLeftForTheNextResume) {
#if HETSIM_TEST_ASAN
  GTEST_SKIP() << "AddressSanitizer maps terabytes of shadow memory: no address-space limit can hold it";
#endif
  // The plan above in a sweep: its error is not the scenario's outcome (more memory would run it),
  // so it is not stored as an error row that only --retry-errors would run again. The sweep says
  // so and exits 2; the database stays without the scenario, which a resume then runs.
  const fs::path study = temp("limit.yaml"), db = temp("limit.db");
  std::ofstream(study) << "name: limit\ncluster: " << (test::source_dir() / "tests/fixtures/clusters/dgx-h100-16.yaml").string()
                       << "\nmodel: qwen3-30b-a3b\nrun: plan\nvary:\n  - flags: [[--no-upper-bound]]\n";
  fs::remove(db);
  const test::CliRun r = run_limited(4000000, "sweep " + study.string() + " --db " + db.string() + " --jobs 1");
  EXPECT_EQ(r.rc, 2) << r.output;
  EXPECT_NE(r.output.find("ran 1: 0 ok, 0 infeasible, 0 error(s), 1 not stored (a limit of this machine)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(db.string() + ": error: 1 scenario(s) hit a limit of this machine and were not stored; the sweep runs them "
                                        "again when resumed. The first: ulimit -v 4000000: error: this simulation needs up to "),
            std::string::npos)
      << r.output;
  const test::CliRun report = run_limited(0, "report " + db.string());
  EXPECT_NE(report.output.find("0 scenario(s)"), std::string::npos) << report.output;
  fs::remove(study);
  fs::remove(db);
}

TEST(ResourceCaps, ARingOverFortyThousandOneGpuNodesDoesNotOverflowTheStack) {
  // Audit 2026-12-03: SimGrid's flow-sharing solver recursed once per link along the ring and
  // overflowed an 8 MiB stack past about 32 768 nodes (signal 11, an internal error).
  const fs::path cluster = temp("ring40k.yaml");
  std::ofstream(cluster) << "name: ring40k\nnode_types:\n  - {name: one, count: 40000, gpu: A100-SXM4-40GB, gpus_per_node: 1,\n"
                            "     intra_node: {fabric: nvswitch, bandwidth: 300GBps, latency: 1us},\n"
                            "     nic: {count: 1, bandwidth: 200Gbps, latency: 2us}}\n"
                            "network: {topology: single-switch, switch_latency: 1us}\n";
  const test::CliRun r = run_limited(0, "collective -c " + cluster.string() + " --op allreduce --size 1MiB");
  EXPECT_EQ(r.rc, 0) << r.output;
  EXPECT_NE(r.output.find("1048576"), std::string::npos) << r.output;  // the size's row
  fs::remove(cluster);
}

}  // namespace
}  // namespace hetsim
