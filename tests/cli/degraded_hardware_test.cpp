// File: tests/cli/degraded_hardware_test.cpp
// What-if degradation (topologies: `degraded`, `degraded_nodes`): a straggler node, a slow NIC,
// a whole slower node type, as `--set` edits of a shipped cluster.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "base/field_override.hpp"
#include "test_support.hpp"
#include "topologies/cluster.hpp"

namespace hetsim {
namespace {

using test::temp;

// Simulates gpt3-1.3b data-parallel on a100-8x8 with the given --set arguments; the report JSON.
nlohmann::json simulate(const std::string& sets) {
  const auto report = temp("report.json");
  const test::CliRun r = test::run_hetsim(
      "simulate -c a100-8x8 -m gpt3-1.3b --strategy dp-even --report " + report.string() + " " + sets, test::Capture::kStderr);
  EXPECT_EQ(r.rc, 0) << r.output;
  nlohmann::json j = nlohmann::json::parse(std::ifstream(report));
  std::filesystem::remove(report);
  return j;
}

TEST(DegradedHardware, FactorsScaleTheTypeAndTheListedNodes) {
  const Cluster c = load_cluster(test::shipped("topologies", "a100-v100-2x2"),
                                 {parse_override("cluster.node_types[1].degraded={compute_slowdown: 1.5, nic_bandwidth: 0.5}"),
                                  parse_override("cluster.node_types[0].degraded_nodes=[{node: 1, intra_node_bandwidth: 0.25}]")});
  EXPECT_DOUBLE_EQ(c.node_types[1].gpu.slowdown, 1.5);
  EXPECT_DOUBLE_EQ(c.node_types[1].nic.bandwidth_Bps, 0.5 * 100e9 / 8);
  EXPECT_DOUBLE_EQ(c.node_types[0].gpu.slowdown, 1);
  ASSERT_EQ(c.node_health.size(), 4u);
  EXPECT_DOUBLE_EQ(c.node_health[1].intra_node_bandwidth, 0.25);  // the second dgx-a100 node
  EXPECT_TRUE(c.node_health[0].healthy());
  EXPECT_TRUE(c.node_health[2].healthy());  // type-wide factors are in the type, not here
}

TEST(DegradedHardware, AStragglerNodeSlowsItsGpusAndTheDataParallelStep) {
  const nlohmann::json healthy = simulate("");
  const nlohmann::json straggler = simulate("--set 'cluster.node_types[0].degraded_nodes=[{node: 1, compute_slowdown: 1.3}]'");
  const nlohmann::json slow_type = simulate("--set 'cluster.node_types[0].degraded={compute_slowdown: 1.3}'");
  for (size_t g = 0; g < 64; ++g) {
    const double base = healthy["devices"][g]["compute_s"];
    const double factor = g / 8 == 1 ? 1.3 : 1.0;  // GPUs 8-15 are node 1
    EXPECT_NEAR(straggler["devices"][g]["compute_s"].get<double>(), factor * base, 1e-9 * base) << g;
    EXPECT_NEAR(slow_type["devices"][g]["compute_s"].get<double>(), 1.3 * base, 1e-9 * base) << g;
  }
  // Every replica waits for the straggler's gradients: the step takes the slow node's compute.
  const double t0 = healthy["iteration_time_s"], t1 = straggler["iteration_time_s"];
  EXPECT_GT(t1, t0 + 0.25 * healthy["devices"][0]["compute_s"].get<double>());
  EXPECT_LE(t1, slow_type["iteration_time_s"].get<double>() + 1e-9);
}

TEST(DegradedHardware, ASlowNicSlowsTheGradientSync) {
  const nlohmann::json healthy = simulate("");
  const nlohmann::json slow_nic = simulate("--set 'cluster.node_types[0].degraded_nodes=[{node: 3, nic_bandwidth: 0.05}]'");
  EXPECT_GT(slow_nic["iteration_time_s"].get<double>(), healthy["iteration_time_s"].get<double>());
  // Compute untouched: the same kernels, whose busy time is summed from end - start of tasks that
  // now start at other times (so equal to rounding, not bit for bit).
  const double compute = healthy["devices"][0]["compute_s"];
  EXPECT_NEAR(slow_nic["devices"][0]["compute_s"].get<double>(), compute, 1e-12 * compute);
}

TEST(DegradedHardware, BadEntriesAreInputErrors) {
  const test::CliRun r = test::run_hetsim(
      "simulate -c a100-8x8 -m gpt3-1.3b --strategy dp-even --set 'cluster.node_types[0].degraded_nodes=[{node: 8, compute_slowdown: 2}]'",
      test::Capture::kStderr);
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.output.find("node_types[0].degraded_nodes[0].node: node 8 of a type with 8 nodes (0-based, within the type)"),
            std::string::npos) << r.output;
  const test::CliRun zero = test::run_hetsim(
      "simulate -c a100-8x8 -m gpt3-1.3b --strategy dp-even --set 'cluster.node_types[0].degraded={nic_bandwidth: 0}'", test::Capture::kStderr);
  EXPECT_EQ(zero.rc, 2) << zero.output;
  const test::CliRun typo = test::run_hetsim(
      "simulate -c a100-8x8 -m gpt3-1.3b --strategy dp-even --set 'cluster.node_types[0].degraded={compute_slowdwn: 2}'", test::Capture::kStderr);
  EXPECT_EQ(typo.rc, 2);
  EXPECT_NE(typo.output.find("did you mean \"compute_slowdown\"?"), std::string::npos) << typo.output;
}

}  // namespace
}  // namespace hetsim

namespace hetsim {
namespace {

// Collectives beside compute (kernels_profile/measured/interference): on two H100 nodes a
// data-parallel step whose gradient all-reduces overlap the backward runs slower than with
// --no-interference, and the report's assumptions say by how much per GPU type.
TEST(Interference, OverlappedCollectivesSlowH100ComputeUnlessTurnedOff) {
  auto run = [](const std::string& extra) {
    const auto report = std::filesystem::temp_directory_path() / ("hetsim_interference_" + std::to_string(::getpid()) + ".json");
    const test::CliRun r = test::run_hetsim(
        "simulate -c pair-a100-h100 -m gpt3-1.3b --strategy dp-even --no-upper-bound --set "
        "'cluster.node_types[0].gpu=H100-SXM5-80GB' --set 'cluster.node_types[0].count=1' --set "
        "'cluster.node_types[1].count=1' --set model.training.global_batch=16 --report " + report.string() + " " + extra,
        test::Capture::kStderr);
    EXPECT_EQ(r.rc, 0) << r.output;
    nlohmann::json j = nlohmann::json::parse(std::ifstream(report));
    std::filesystem::remove(report);
    return j;
  };
  const nlohmann::json on = run(""), off = run("--no-interference");
  const double t_on = on["iteration_time_s"].get<double>(), t_off = off["iteration_time_s"].get<double>();
  EXPECT_GT(t_on, 1.02 * t_off);
  EXPECT_LT(t_on, 1.35 * t_off);  // at most the whole step at the measured slowdown
  bool stated = false;
  for (const auto& a : on["assumptions"]) stated = stated || a.get<std::string>().find("H100-SXM5-80GB 1.35x") != std::string::npos;
  EXPECT_TRUE(stated) << on["assumptions"].dump();
}

}  // namespace
}  // namespace hetsim
