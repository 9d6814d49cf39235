// File: tests/topologies/cluster_test.cpp
#include "topologies/cluster.hpp"

#include <gtest/gtest.h>

#include "base/data_dir.hpp"
#include "test_support.hpp"

namespace hetsim {
namespace {

TEST(Cluster, EveryShippedClusterLoads) {
  const std::vector<std::string> names = shipped_names("topologies");
  EXPECT_EQ(names, (std::vector<std::string>{"a100-8x8", "a100-mi250x", "a100-v100-2x2", "h100-mi300x", "hap-v100-p100",
                                            "hethub-768", "p3-8xlarge-5", "pair-a100-h100", "pair-a100-mi250x", "pair-a100-mi300x",
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

}  // namespace
}  // namespace hetsim
