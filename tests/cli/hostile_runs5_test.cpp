// File: tests/cli/hostile_runs5_test.cpp
// From a fourth attacker's audit (2026-12-07): inputs that ran without a word though the model, the
// device or the run contradicts them are now refused at their line: a layer run recomputing experts
// a dense model has not, a measured rate above the device's peak, a recompute count past every
// chunk, a collective of no whole element, an empty campaign name, a profile named like
// --calibration's keywords, a sizing shorter than one iteration, and an SPMD plan's batch split on
// fewer samples than GPUs.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "cli/scratch_dir.hpp"
#include "test_support.hpp"

namespace hetsim {
namespace {

using Dir = test::ScratchDir;

// What reaches stderr (validate prints its table's header on stdout before it evaluates a run).
using test::cli_messages;

TEST(HostileRuns5, ALayerRunRecomputesOnlyModulesItsModelHas) {
  // moe_act on gpt3-1.3b was costed as nothing and printed a row; a plan refused the same.
  const Dir d;
  const std::string runs = d.write("r.yaml",
                                   "- name: l1\n  source: s\n  cluster: a100-v100-2x2\n"
                                   "  layer: {model: gpt3-1.3b, tp: 2, micro_batch: 1, recompute: selective, recompute_modules: [moe_act]}\n"
                                   "  measured: {forward_s: 0.001}\n");
  const test::CliRun r = cli_messages("validate --runs " + runs);
  EXPECT_EQ(r.rc, 2) << r.output;
  EXPECT_EQ(r.output, runs + ":4:93: error: recompute_modules: moe_act recomputes the experts' activation; the model has no moe: block\n");
}

TEST(HostileRuns5, AMeasuredMatmulFasterThanItsDevicesPeakIsRefused) {
  // 1e6 TFLOP/s on an A100 (312 at its bf16 peak) was a row at -100 %, and would have pulled a fit.
  const Dir d;
  const std::string runs = d.write("r.yaml",
                                   "- name: m1\n  source: s\n  matmul: {device: A100-SXM4-80GB, m: 1024, n: 10240, k: 5120, dtype: bf16}\n"
                                   "  measured: {tflops: 1e6}\n"
                                   "- name: m2\n  source: s\n  matmul: {device: A100-SXM4-80GB, m: 1024, n: 10240, k: 5120, dtype: bf16}\n"
                                   "  measured: {time_s: 1e-6}\n");
  test::CliRun r = cli_messages("validate --runs " + runs + " --only m1");
  EXPECT_EQ(r.rc, 2) << r.output;
  EXPECT_EQ(r.output, runs + ":4:22: error: [0].measured.tflops: 1e+06 TFLOP/s is more than A100-SXM4-80GB can do in bf16 (at most 343.2 TFLOP/s: its peak, the fastest 16-bit one for 32-bit formats, and 10 % for clocks)\n");
  r = cli_messages("validate --runs " + runs + " --only m2");  // 1 us for 107 GFLOP: 107 PFLOP/s
  EXPECT_EQ(r.rc, 2) << r.output;
  EXPECT_EQ(r.output, runs + ":8:22: error: [1].measured.time_s: 1e-06 s for 1.07e+11 FLOP is more than A100-SXM4-80GB can do in bf16 "
                             "(at most 343.2 TFLOP/s: its peak, the fastest 16-bit one for 32-bit formats, and 10 % for clocks)\n");
}

TEST(HostileRuns5, AMeasuredFp32MatmulMayRunFasterThanTheVectorPeakNotThan16Bit) {
  // 32-bit products run on matrix units faster than a device file's fp32 figure (an MI250X GCD's fp32
  // vector peak is 23.95 TFLOP/s; its matrix cores do twice that), never faster than its 16-bit peak:
  // the ceiling kernel tables use.
  const Dir d;
  const std::string runs = d.write("r.yaml",
                                   "- name: m1\n  source: s\n  matmul: {device: MI250X, m: 8192, n: 8192, k: 8192, dtype: fp32}\n"
                                   "  measured: {tflops: 30}\n"
                                   "- name: m2\n  source: s\n  matmul: {device: MI250X, m: 8192, n: 8192, k: 8192, dtype: fp32}\n"
                                   "  measured: {tflops: 250}\n");
  EXPECT_EQ(cli_messages("validate --runs " + runs + " --only m1").rc, 0);
  const test::CliRun r = cli_messages("validate --runs " + runs + " --only m2");
  EXPECT_EQ(r.rc, 2) << r.output;
  EXPECT_NE(r.output.find("250 TFLOP/s is more than MI250X can do in fp32 (at most 210.65 TFLOP/s"), std::string::npos) << r.output;
}

TEST(HostileRuns5, RecomputeLayersPastEveryChunkIsRefused) {
  // recompute_layers: 999 on a 24-layer model printed "first 999 layers of each chunk".
  const Dir d;
  const std::string runs = d.write("r.yaml",
                                   "- name: g1\n  source: s\n  cluster: selene-64\n  nodes: 4\n  model: gpt3-1.3b\n"
                                   "  megatron: {tp: 1, pp: 1, micro_batch: 16, recompute: full, recompute_layers: 999}\n"
                                   "  measured: {tflops_per_gpu: 137}\n");
  const test::CliRun r = cli_messages("validate --runs " + runs);
  EXPECT_EQ(r.rc, 2) << r.output;
  EXPECT_EQ(r.output, runs + ":6:13: error: [0].megatron: the grid breaks a plan rule: recompute_layers: 999 layers recomputed in each "
                             "model chunk, whose largest holds 24: it takes 1 to 24 (leave it out to recompute every layer)\n");
}

TEST(HostileRuns5, AnEmptyCampaignNameIsRefused) {
  // source_group: "" grouped the run with nothing said, where an empty source or class was refused.
  const Dir d;
  const std::string runs = d.write("r.yaml",
                                   "- name: m1\n  source: s\n  source_group: \"\"\n"
                                   "  matmul: {device: A100-SXM4-80GB, m: 1024, n: 1024, k: 1024, dtype: bf16}\n  measured: {tflops: 100}\n");
  const test::CliRun r = cli_messages("validate --runs " + runs);
  EXPECT_EQ(r.rc, 2) << r.output;
  EXPECT_EQ(r.output, runs + ":3:17: error: [0].source_group: is empty; leave it out (the run's source is its group) or name the campaign\n");
}

TEST(HostileRuns5, ASizingOfLessThanOneIterationIsRefused) {
  // train_tokens: 1 printed a time to train of 2.2 us, which ranked first.
  const Dir d;
  const std::string sizing = d.write("s.yaml",
                                     "name: s\nmodel: gpt3-1.3b\ntrain_tokens: 1\nobjective: [time_to_train, cost]\n"
                                     "budget: {rent_per_hour: 100USD/h}\noffers:\n  - name: h100\n"
                                     "    node: {gpu: H100-SXM5-80GB, gpus_per_node: 8, intra_node: {fabric: nvswitch, bandwidth: 450GBps, latency: 1us},\n"
                                     "           nic: {count: 8, bandwidth: 400Gbps, latency: 2us}}\n"
                                     "    rent: 40USD/h\n    power: 10.2kW\n    source: \"test\"\n    max_count: 2\n"
                                     "network: {topology: fat-tree, oversubscription: 1, switch_latency: 1us}\n");
  const test::CliRun r = cli_messages("size --dry-run " + sizing + " --db " + (d.path / "s.db").string());
  EXPECT_EQ(r.rc, 2) << r.output;
  EXPECT_EQ(r.output, sizing + ": error: train_tokens: 1 tokens is less than one iteration of gpt3-1.3b (a global batch of 512 samples of "
                               "2048 tokens)\n");
}

TEST(HostileRuns5, AnSpmdPlansBatchSplitOnFewerSamplesThanGpusNamesTheBatch) {
  // Every "data" rule of a valid plan was blamed (50 errors and a count), --global-batch never named.
  // The plan: hetsim plan --no-pipeline's, kept as a fuzz seed.
  const std::string plan = (test::source_dir() / "tests/fuzz/seeds/plan/gpt3-1.3b-a100-v100-2x2.yaml").string();
  const test::CliRun r = cli_messages("simulate --no-upper-bound --plan " + plan + " --global-batch 2");
  EXPECT_EQ(r.rc, 2) << r.output;
  EXPECT_NE(r.output.find(": error: ops[0].rule: \"data\" splits the batch over the GPUs, but this run gives 2 samples at once to its 32 "
                          "GPUs, fewer than one each: raise the global batch (--global-batch or the model's training.global_batch), or give a "
                          "plan without data rules\n"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("is not a rule of"), std::string::npos) << r.output;
}

TEST(HostileRuns5, TraceDirMakesItsFolderNotTheFoldersAboveIt) {
  // --trace-dir /nonexistent/d made /nonexistent too, where --report refuses a missing folder.
  const Dir d;
  const std::string runs = (test::source_dir() / "studies/validation/megatron.yaml").string();
  const std::string missing = (d.path / "no-such" / "traces").string();
  test::CliRun r = cli_messages("validate --runs " + runs + " --only 1.7b --trace-dir " + missing);
  EXPECT_EQ(r.rc, 2) << r.output;
  EXPECT_EQ(r.output, "--trace-dir: error: folder " + (d.path / "no-such").string() +
                          " does not exist; make it first, or give a folder inside one that does\n");
  EXPECT_FALSE(std::filesystem::exists(d.path / "no-such"));
  r = cli_messages("validate --runs " + runs + " --only 1.7b --trace-dir " + (d.path / "traces").string() + "/");  // a trailing slash
  EXPECT_EQ(r.rc, 0) << r.output;
  EXPECT_TRUE(std::filesystem::is_directory(d.path / "traces"));
}

}  // namespace
}  // namespace hetsim
