// File: tests/cli/hostile_runs6_test.cpp
// Left over from the fourth attacker's audit (2026-12-07), refused since: sequence parallelism
// asked of tensor-parallel groups of one GPU, and a --set path with no "." after an index.
#include <gtest/gtest.h>

#include <string>

#include "cli/scratch_dir.hpp"
#include "test_support.hpp"

namespace hetsim {
namespace {

using Dir = test::ScratchDir;

using test::cli_messages;

TEST(HostileRuns6, SequenceParallelismWithoutTensorParallelismIsRefused) {
  // Megatron-LM turns sequence_parallel off at tp 1; hetsim took it and named the plan "sequence
  // parallel". A training run's grid and a layer run alike.
  const Dir d;
  const std::string runs = d.write("r.yaml",
                                   "- name: g1\n  source: s\n  cluster: selene-64\n  nodes: 4\n  model: gpt3-1.3b\n"
                                   "  megatron: {tp: 1, pp: 1, micro_batch: 16, sequence_parallel: true}\n"
                                   "  measured: {tflops_per_gpu: 137}\n");
  test::CliRun r = cli_messages("validate --runs " + runs);
  EXPECT_EQ(r.rc, 2) << r.output;
  EXPECT_EQ(r.output, runs + ":6:13: error: [0].megatron: the grid breaks a plan rule: sequence_parallel: sequence parallelism "
                             "splits along the sequence what a tensor-parallel group would otherwise hold in full; with tp 1 in "
                             "every stage there is no such group (Megatron-LM turns it off there): set it false, or give a stage tp > 1\n");
  // Refused before its row: stdout has the count of runs and no table header over nothing.
  EXPECT_EQ(test::run_hetsim("validate --runs " + runs, test::Capture::kStdout).output, "hetsim validate: 1 published run from 1 file\n\n");
  const std::string layer = d.write("l.yaml",
                                    "- name: l1\n  source: s\n  cluster: a100-v100-2x2\n"
                                    "  layer: {model: gpt3-1.3b, tp: 1, micro_batch: 1, sequence_parallel: true}\n"
                                    "  measured: {forward_s: 0.001}\n");
  r = cli_messages("validate --runs " + layer);
  EXPECT_EQ(r.rc, 2) << r.output;
  EXPECT_EQ(r.output, layer + ":4:71: error: [0].layer.sequence_parallel: splits along the sequence what a tensor-parallel group "
                              "would otherwise hold in full; at tp 1 there is no such group (Megatron-LM turns it off there)\n");
  // With tensor parallelism it is a plan like any other.
  const std::string ok = d.write("ok.yaml",
                                 "- name: l2\n  source: s\n  cluster: a100-v100-2x2\n"
                                 "  layer: {model: gpt3-1.3b, tp: 2, micro_batch: 1, sequence_parallel: true}\n"
                                 "  measured: {forward_s: 0.001}\n");
  EXPECT_EQ(cli_messages("validate --runs " + ok).rc, 0);
}

TEST(HostileRuns6, ASetPathWithNoDotAfterAnIndexIsRefused) {
  // node_types[0]count=1 was read as node_types[0].count=1: a typo that still changed the run.
  const test::CliRun r = cli_messages("simulate --set cluster.node_types[0]count=1");
  EXPECT_EQ(r.rc, 2) << r.output;
  EXPECT_NE(r.output.find("\"count\" follows \"[0]\" without a \".\" (write [0].count)"), std::string::npos) << r.output;
  EXPECT_EQ(cli_messages("simulate -m bert-base --no-upper-bound --set cluster.node_types[0].count=1").rc, 0);  // with it, a run
}

}  // namespace
}  // namespace hetsim
