// File: tests/topologies/cluster_test.cpp
#include "topologies/cluster.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "base/data_dir.hpp"
#include "base/input_error.hpp"
#include "test_support.hpp"
#include "topologies/link_class.hpp"

namespace hetsim {
namespace {

TEST(Cluster, EveryShippedClusterLoads) {
  const std::vector<std::string> names = shipped_names("topologies");
  EXPECT_EQ(names, (std::vector<std::string>{"a100-8x8", "a100-mi250x", "a100-v100-2x2", "gb200-nvl72-16", "graph-h100-4", "h100-mi300x", "hap-v100-p100",
                                            "hethub-768", "meta-h100-24k", "mi300x-mi355x", "p3-8xlarge-5", "pair-a100-h100", "pair-a100-mi250x", "pair-a100-mi300x",
                                            "pair-h100-mi250x", "pair-h100-mi300x", "pair-mi250x-mi300x", "selene-64"}));
  for (const std::string& n : names) {
    const Cluster c = load_cluster(test::shipped("topologies", n));
    EXPECT_EQ(c.name, n);
    EXPECT_GT(c.gpu_count(), 0);
  }
}

TEST(Cluster, DefaultClusterIsNumberedNodeByNode) {
  const Cluster c = load_cluster(test::shipped("topologies", "a100-v100-2x2"));
  ASSERT_EQ(c.gpu_count(), 32);
  EXPECT_EQ(c.node_count(), 4);
  EXPECT_EQ(c.device_of(0).name, "A100-SXM4-40GB");
  EXPECT_EQ(c.device_of(31).name, "V100-SXM2-32GB");
  EXPECT_EQ(c.gpus[9].node, 1);
  EXPECT_EQ(c.gpus[9].local, 1);
  EXPECT_DOUBLE_EQ(c.node_types[0].nic.bandwidth_Bps, 25e9);
  EXPECT_DOUBLE_EQ(c.node_types[1].intra.bandwidth_Bps, 150e9);
  const Cluster v100 = c.only_node_type(1);
  EXPECT_EQ(v100.gpu_count(), 16);
  EXPECT_EQ(v100.device_of(0).name, "V100-SXM2-32GB");
}

TEST(Cluster, HapTestbedHasSlowNetwork) {
  const Cluster c = load_cluster(test::shipped("topologies", "hap-v100-p100"));
  EXPECT_EQ(c.gpu_count(), 64);
  EXPECT_DOUBLE_EQ(c.node_types[0].nic.bandwidth_Bps, 1.3e9);  // 10.4 Gbit/s
}

TEST(Cluster, AchievableDefaultsToTheLinkClassTable) {
  const Cluster c = load_cluster(test::shipped("topologies", "h100-mi300x"));
  EXPECT_FALSE(c.node_types[0].intra.achievable.has_value());  // not stated: the table's default
  const Achievable h100 = intra_achievable(c.node_types[0]);
  EXPECT_EQ(h100.link_class, LinkClass::kNvlink4);
  EXPECT_DOUBLE_EQ(h100.fraction, 370.0 / 450);
  EXPECT_NE(h100.source.find("nccl-tests issue #212"), std::string::npos);
  EXPECT_EQ(intra_achievable(c.node_types[1]).link_class, LinkClass::kXgmi);
  EXPECT_EQ(nic_achievable(c.node_types[1]).link_class, LinkClass::kNic);
  EXPECT_GT(switch_reduction(c.node_types[0]).bandwidth_Bps, 0);
  EXPECT_EQ(switch_reduction(c.node_types[1]).bandwidth_Bps, 0);
  for (const AchievableDefault& row : achievable_table()) {  // every row in (0, 1] with a source
    EXPECT_GT(row.fraction, 0);
    EXPECT_LE(row.fraction, 1);
    EXPECT_FALSE(row.source.empty());
  }
}

TEST(Cluster, StatedAchievableOverridesTheDefaultAndNamesItsSource) {
  const auto file = std::filesystem::temp_directory_path() / "hetsim_achievable_cluster.yaml";
  std::ofstream(file) << "name: stated\n"
                         "node_types:\n"
                         "  - name: n\n"
                         "    count: 1\n"
                         "    gpu: H100-SXM5-80GB\n"
                         "    gpus_per_node: 8\n"
                         "    intra_node: {fabric: nvswitch, bandwidth: 450GBps, latency: 1us, achievable: 0.75, switch_reduction: 200GBps}\n"
                         "    nic: {count: 8, bandwidth: 400Gbps, latency: 2us, achievable: 0.9, achievable_source: \"ib_write_bw, our lab\"}\n"
                         "network: {topology: single-switch, switch_latency: 1us}\n";
  const Cluster c = load_cluster(file);
  std::filesystem::remove(file);
  EXPECT_DOUBLE_EQ(intra_achievable(c.node_types[0]).fraction, 0.75);
  EXPECT_NE(intra_achievable(c.node_types[0]).source.find(":7"), std::string::npos);  // file:line
  EXPECT_EQ(nic_achievable(c.node_types[0]).source, "ib_write_bw, our lab");
  EXPECT_DOUBLE_EQ(switch_reduction(c.node_types[0]).bandwidth_Bps, 200e9);
}

TEST(Cluster, AGraphNetworkIsReadBesideTheClusterAndADisconnectedOneNamesTheGpusApart) {
  const auto dir = std::filesystem::temp_directory_path() / ("hetsim_graph_cluster_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir / "nets");
  std::ofstream(dir / "nets" / "split.yaml") << "switches: [a, b, c]\n"
                                               "links:\n"
                                               "  - {between: [a, c], bandwidth: 400Gbps, latency: 1us}\n"
                                               "attach:\n"
                                               "  - {nodes: 0, switch: a}\n"
                                               "  - {nodes: 1, switch: b}\n";
  std::ofstream(dir / "cluster.yaml") << "name: split\n"
                                         "node_types:\n"
                                         "  - name: n\n"
                                         "    count: 2\n"
                                         "    gpu: H100-SXM5-80GB\n"
                                         "    gpus_per_node: 8\n"
                                         "    intra_node: {fabric: nvswitch, bandwidth: 450GBps, latency: 1us}\n"
                                         "    nic: {count: 8, bandwidth: 400Gbps, latency: 2us}\n"
                                         "network: {topology: graph, graph: nets/split.yaml, switch_latency: 1us}\n";
  try {
    (void)load_cluster(dir / "cluster.yaml");
    ADD_FAILURE() << "a disconnected graph loaded";
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("split.yaml"), std::string::npos) << m;
    EXPECT_NE(m.find("GPUs 0-7 (node 0, switch a) cannot reach GPUs 8-15 (node 1, switch b)"), std::string::npos) << m;
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace hetsim
