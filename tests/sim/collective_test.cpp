// File: tests/sim/collective_test.cpp
// Collectives simulated in SimGrid against their closed forms, written out in each test.
#include "sim/collective.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "sim/executor.hpp"
#include "test_support.hpp"

namespace hetsim {
namespace {

using test::fixture_cluster;
using test::shipped_cluster;

CollectiveTask task(CollectiveOp op, std::vector<int> group, double bytes, Algorithm a) {
  CollectiveTask t = collective(op, std::move(group), bytes);
  t.algorithm = a;
  if (op == CollectiveOp::kBroadcast || op == CollectiveOp::kReduce) t.root = t.group.front();
  return t;
}

double run(const Cluster& c, const std::vector<CollectiveTask>& tasks, Fidelity f = Fidelity::kPhase) {
  Program p;
  p.devices.resize(c.gpu_count());
  for (const CollectiveTask& t : tasks) p.add({"c", t, {}});
  return simulate(p, c, SimOptions{f, false}).iteration_time_s;
}
double run(const Cluster& c, const CollectiveTask& t, Fidelity f = Fidelity::kPhase) {
  return run(c, std::vector<CollectiveTask>{t}, f);
}

std::vector<int> range(int first, int count, int stride = 1) {
  std::vector<int> v;
  for (int i = 0; i < count; ++i) v.push_back(first + i * stride);
  return v;
}

int chunks(double bytes) { return std::max(1, static_cast<int>(std::ceil(bytes / kPipelineChunkBytes))); }

// a100-8x8, one GPU per node: every edge is PCIe (32 GB/s) -> NIC (25 GB/s) -> switch -> NIC -> PCIe.
constexpr double kNicBw = 25e9;
constexpr double kNicAlpha = 5e-6;  // 2 us NIC + 1 us switch + 2 us NIC
constexpr double kGiB = 1024.0 * 1024 * 1024;

class Closed : public ::testing::TestWithParam<Fidelity> {
 protected:
  Cluster c_ = shipped_cluster("a100-8x8");
  std::vector<int> one_per_node_ = range(0, 8, 8);
};

TEST_P(Closed, RingAllReduce) {
  // 2(n-1) * (alpha + S/n / B)
  const double expect = ring_allreduce_time(8, kGiB, kNicBw, kNicAlpha);
  EXPECT_NEAR(run(c_, task(CollectiveOp::kAllReduce, one_per_node_, kGiB, Algorithm::kRing), GetParam()) / expect, 1, 0.01);
}

TEST_P(Closed, RingAllGatherAndReduceScatter) {
  // (n-1) * (alpha + S/n / B)
  const double expect = 7 * (kNicAlpha + kGiB / 8 / kNicBw);
  for (CollectiveOp op : {CollectiveOp::kAllGather, CollectiveOp::kReduceScatter}) {
    EXPECT_NEAR(run(c_, task(op, one_per_node_, kGiB, Algorithm::kRing), GetParam()) / expect, 1, 0.01);
  }
}

TEST_P(Closed, ChainBroadcastAndReduce) {
  // Pipelined chain of n ranks, k chunks of c: (k + n - 2) * (alpha + c / B)
  const int k = chunks(kGiB);
  const double expect = (k + 8 - 2) * (kNicAlpha + kGiB / k / kNicBw);
  for (CollectiveOp op : {CollectiveOp::kBroadcast, CollectiveOp::kReduce}) {
    EXPECT_NEAR(run(c_, task(op, one_per_node_, kGiB, Algorithm::kChain), GetParam()) / expect, 1, 0.01);
  }
}

TEST_P(Closed, PairwiseAllToAll) {
  // n-1 rounds, each rank sending S/n to one peer: (n-1) * (alpha + S/n / B)
  const double expect = 7 * (kNicAlpha + kGiB / 8 / kNicBw);
  EXPECT_NEAR(run(c_, task(CollectiveOp::kAllToAll, one_per_node_, kGiB, Algorithm::kPairwise), GetParam()) / expect, 1, 0.01);
}

TEST_P(Closed, DoubleBinaryTreeOnTwoRanks) {
  // Two trees, each S/2 in k chunks c; each rank roots one tree. Round 0 and round k carry one
  // chunk per direction, the k-1 rounds between two (one reduce, one broadcast):
  // 2 (alpha + c/B) + (k-1) (alpha + 2c/B) = (k+1) alpha + S/B.
  const int k = chunks(kGiB / 2);
  const double expect = (k + 1) * kNicAlpha + kGiB / kNicBw;
  EXPECT_NEAR(run(c_, task(CollectiveOp::kAllReduce, {0, 8}, kGiB, Algorithm::kTree), GetParam()) / expect, 1, 0.01);
}

TEST_P(Closed, HierarchicalAllReduce) {
  // 8 nodes x 8 GPUs: intra-node ring reduce-scatter (m-1 steps of S/m over NVSwitch, 300 GB/s,
  // 1 us), 8 concurrent inter-node rings on separate NICs (2(N-1) steps of S/(mN)), all-gather.
  const double intra = 7 * (1e-6 + kGiB / 8 / 300e9);
  const double inter = 2 * 7 * (kNicAlpha + kGiB / 64 / kNicBw);
  const double expect = 2 * intra + inter;
  EXPECT_NEAR(run(c_, task(CollectiveOp::kAllReduce, range(0, 64), kGiB, Algorithm::kHierarchical), GetParam()) / expect, 1,
              0.01);
}

TEST_P(Closed, HierarchicalAllGatherAndReduceScatter) {
  // All-gather: inter-node rings first ((N-1) steps of S/n on the NICs), then intra-node
  // ((m-1) steps of S/m over NVSwitch); reduce-scatter runs the same phases in reverse.
  const double inter = 7 * (kNicAlpha + kGiB / 64 / kNicBw);
  const double intra = 7 * (1e-6 + kGiB / 8 / 300e9);
  for (CollectiveOp op : {CollectiveOp::kAllGather, CollectiveOp::kReduceScatter}) {
    EXPECT_NEAR(run(c_, task(op, range(0, 64), kGiB, Algorithm::kHierarchical), GetParam()) / (inter + intra), 1, 0.01);
  }
}

TEST_P(Closed, RingOnMi300xUsesPeerLinks) {
  // Full xGMI mesh: each ring hop is its own 64 GB/s link (not a 448 GB/s switch port).
  const Cluster c = fixture_cluster("mi300x-2");
  const double expect = ring_allreduce_time(8, kGiB, 64e9, 1e-6);
  EXPECT_NEAR(run(c, task(CollectiveOp::kAllReduce, range(0, 8), kGiB, Algorithm::kRing), GetParam()) / expect, 1, 0.01);
}

INSTANTIATE_TEST_SUITE_P(Fidelities, Closed, ::testing::Values(Fidelity::kPhase, Fidelity::kStep),
                         [](const auto& info) { return std::string(fidelity_name(info.param)); });

TEST(Fidelity, StepAndPhaseAgreeOnRingsTreesAndChains) {
  const Cluster c = shipped_cluster("a100-8x8");
  for (const CollectiveTask& t : {task(CollectiveOp::kAllReduce, range(0, 16), 256 << 20, Algorithm::kRing),
                                  task(CollectiveOp::kAllReduce, range(0, 8, 8), 256 << 20, Algorithm::kTree),
                                  task(CollectiveOp::kAllReduce, range(0, 64), 8 << 20, Algorithm::kTree),
                                  task(CollectiveOp::kBroadcast, range(0, 16), 64 << 20, Algorithm::kChain)}) {
    SCOPED_TRACE(std::string(algorithm_name(t.algorithm)) + " over " + std::to_string(t.group.size()));
    EXPECT_NEAR(run(c, t, Fidelity::kPhase) / run(c, t, Fidelity::kStep), 1, 0.01);
  }
}

TEST(Sharing, TwoAllReducesThroughOneNicTakeTwiceAsLong) {
  // DGX-1 V100: GPUs 16 and 20 both leave through NIC 0 of their node (i mod 4).
  const Cluster c = shipped_cluster("a100-v100-2x2");
  const CollectiveTask a = task(CollectiveOp::kAllReduce, {16, 0}, kGiB, Algorithm::kRing);
  const CollectiveTask b = task(CollectiveOp::kAllReduce, {20, 8}, kGiB, Algorithm::kRing);
  EXPECT_NEAR(run(c, {a, b}) / run(c, a), 2.0, 0.1);
  const CollectiveTask other_nic = task(CollectiveOp::kAllReduce, {17, 1}, kGiB, Algorithm::kRing);
  EXPECT_NEAR(run(c, {a, other_nic}) / run(c, a), 1.0, 0.01);
}

TEST(Sharing, OversubscribedFatTreeHalvesCrossLeafBandwidth) {
  // 16 GPUs of leaf 0 each send 1 GB: to leaf 1 they share a 2:1 uplink, inside leaf 0 they do not.
  const Cluster c = fixture_cluster("fat-tree-2to1");
  auto sends = [&](int dst_offset) {
    Program p;
    p.devices.resize(c.gpu_count());
    for (int g = 0; g < 16; ++g) p.add({"s", SendTask{g, (g + dst_offset) % 32, 1e9}, {}});
    return simulate(p, c).iteration_time_s;
  };
  const double cross_leaf = sends(16);  // nodes 0,1 -> nodes 2,3
  const double same_leaf = sends(8);    // node 0 -> node 1, node 1 -> node 0
  EXPECT_NEAR((cross_leaf - 7e-6) / (same_leaf - 5e-6), 2.0, 0.02);
}

TEST(Staging, CrossVendorPaysTwoCopiesOnTopOfTheNetwork) {
  // A100 (PCIe Gen4, 32 GB/s) -> MI250X (PCIe Gen4, 32 GB/s), NICs 25 GB/s, 5 us NIC to NIC.
  Cluster c = shipped_cluster("a100-mi250x");
  auto send = [&] {
    Program p;
    p.devices.resize(c.gpu_count());
    p.add({"s", SendTask{0, 16, 1e9}, {}});
    return simulate(p, c).iteration_time_s;
  };
  const double network = 5e-6 + 1e9 / 25e9;
  EXPECT_NEAR(send() / (1e9 / 32e9 + network + 1e9 / 32e9), 1, 0.005);
  c.network.cross_vendor_rdma = true;
  EXPECT_NEAR(send() / network, 1, 0.005);
}

TEST(Algorithms, HierarchicalBeatsFlatRingWithFewNics) {
  // A flat ring crosses each node boundary once, so one NIC per node carries ~2S. Hierarchical
  // moves only 2(N-1)/N * S/m per GPU across nodes, spread over all the node's NICs.
  for (const auto& [name, max_ratio] : {std::pair<std::string, double>{"a100-v100-2x2", 0.35},  // 4-8 NICs per node
                                        std::pair<std::string, double>{"hap-v100-p100", 0.97}}) {  // 1 NIC per node
    const Cluster c = shipped_cluster(name);
    const std::vector<int> all = range(0, c.gpu_count());
    const double flat = run(c, task(CollectiveOp::kAllReduce, all, 256 << 20, Algorithm::kRing));
    const double hier = run(c, task(CollectiveOp::kAllReduce, all, 256 << 20, Algorithm::kHierarchical));
    EXPECT_LT(hier, max_ratio * flat) << name;
  }
}

TEST(Algorithms, AutoPicksByTopologyAndSize) {
  const Cluster c = shipped_cluster("a100-8x8");
  const Fabric f(c);
  // Small messages over many nodes: a tree's log(n) latency beats the ring's 2(n-1).
  EXPECT_EQ(choose_algorithm(task(CollectiveOp::kAllReduce, range(0, 8, 8), 4096, Algorithm::kAuto), c, f).algorithm,
            Algorithm::kTree);
  // Large messages over full nodes: hierarchical uses every NIC.
  EXPECT_EQ(choose_algorithm(task(CollectiveOp::kAllReduce, range(0, 64), kGiB, Algorithm::kAuto), c, f).algorithm,
            Algorithm::kHierarchical);
  EXPECT_EQ(choose_algorithm(task(CollectiveOp::kBroadcast, range(0, 8), kGiB, Algorithm::kAuto), c, f).algorithm,
            Algorithm::kChain);
}

TEST(Algorithms, UnevenShardsChooseGroupedBroadcastsWhenSkewed) {
  // HAP's choice: padded all-gather moves (n-1) x the largest shard, grouped broadcasts move
  // about the sum of the others' shards.
  const Cluster c = shipped_cluster("a100-8x8");
  const Fabric f(c);
  CollectiveTask skewed = task(CollectiveOp::kAllGather, range(0, 4, 8), 6e8, Algorithm::kAuto);
  skewed.shard_bytes = {3e8, 1e8, 1e8, 1e8};
  EXPECT_EQ(choose_algorithm(skewed, c, f).algorithm, Algorithm::kGrouped);
  CollectiveTask even = skewed;
  even.shard_bytes = {1.5e8, 1.5e8, 1.5e8, 1.5e8};
  EXPECT_EQ(choose_algorithm(even, c, f).algorithm, Algorithm::kRing);
  skewed.algorithm = Algorithm::kGrouped;
  CollectiveTask padded = skewed;
  padded.algorithm = Algorithm::kRing;
  EXPECT_LT(run(c, skewed), run(c, padded));
  // Padded: (n-1) steps of the largest shard.
  EXPECT_NEAR(run(c, padded) / (3 * (kNicAlpha + 3e8 / kNicBw)), 1, 0.01);
}

TEST(Algorithms, UnsupportedCombinationsSayWhy) {
  const Cluster c = shipped_cluster("a100-v100-2x2");
  EXPECT_NE(unsupported_reason(task(CollectiveOp::kBroadcast, range(0, 4), 1, Algorithm::kTree), Algorithm::kTree, c), "");
  EXPECT_NE(unsupported_reason(task(CollectiveOp::kAllReduce, {0, 1, 8}, 1, Algorithm::kHierarchical), Algorithm::kHierarchical, c),
            "");
  EXPECT_EQ(unsupported_reason(task(CollectiveOp::kAllReduce, {0, 1, 8, 9}, 1, Algorithm::kHierarchical), Algorithm::kHierarchical, c),
            "");
}

}  // namespace
}  // namespace hetsim
