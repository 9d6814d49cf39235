// File: tests/sim/channel_schedules_test.cpp
// NCCL's channel rings (sim/channel_schedules.hpp) simulated against their closed forms: every NIC
// and every mesh link carries its share.
#include "sim/channel_schedules.hpp"

#include <gtest/gtest.h>

#include <set>

#include "collective_support.hpp"
#include "test_support.hpp"
#include "topologies/fabric.hpp"

namespace hetsim {
namespace {

using test::fixture_cluster;
using test::shipped_cluster;
using test::task;
using test::run;
using test::range;
using test::fraction;
using test::kNicBw;
using test::kNicAlpha;
using test::kGiB;

// Per GPU: the rings that leave its node from it, and those that enter its node at it.
struct Crossings {
  std::vector<int> leaves, entered;
};
Crossings crossings(const std::vector<std::vector<int>>& rings, const Cluster& c) {
  Crossings x{std::vector<int>(static_cast<size_t>(c.gpu_count()), 0), std::vector<int>(static_cast<size_t>(c.gpu_count()), 0)};
  for (const auto& r : rings) {
    for (size_t k = 0; k < r.size(); ++k) {
      const int a = r[k], b = r[(k + 1) % r.size()];
      if (c.gpus[a].node != c.gpus[b].node) {
        ++x.leaves[static_cast<size_t>(a)];
        ++x.entered[static_cast<size_t>(b)];
      }
    }
  }
  return x;
}

TEST(Channels, OneDgx1NodeRunsItsRingsOverEveryNvlink) {
  // One DGX-1 V100 (6 NVLinks of 25 GB/s per GPU, some pairs doubled): 3 edge-disjoint cycles in
  // both directions, 6 rings each carrying S/6, every directed NVLink wire carrying one ring. A
  // ring step moves S/8/6 over a 25 GB/s wire at the NVLink fraction: the all-reduce takes
  // 2(n-1) (alpha + S/48 / B) with n = 8, busbw 6 x 20 GB/s (it was one ring on single links:
  // 20 GB/s).
  const Cluster c = shipped_cluster("a100-v100-2x2");
  const double link = 25e9 * fraction(LinkClass::kNvlink2);
  const double t = run(c, task(CollectiveOp::kAllReduce, range(16, 8), kGiB, Algorithm::kRing));
  EXPECT_NEAR(t / (14 * (1e-6 + kGiB / 48.0 / link)), 1, 0.01);
  // Broadcast and reduce spread over the same rings: a chain per ring from the root.
  const double b = run(c, task(CollectiveOp::kBroadcast, range(16, 8), kGiB, Algorithm::kChain));
  EXPECT_LT(b, 1.25 * kGiB / 6 / link);
}

TEST(Channels, PartsOfAMeshNodeRunTheirRingBothWaysAndBroadcastsKeepUpWithAllGathers) {
  // GPUs 0-3 of a DGX-1 V100 (locals 0, 1, 2, 3: every hop a direct NVLink, the 0-1 one single):
  // the ring and its reverse each carry S/2, so each all-gather step moves S/4/2 over the single
  // 25 GB/s link at the NVLink fraction: 3 (alpha + S/8 / B), where one direction alone took twice.
  const Cluster c = shipped_cluster("a100-v100-2x2");
  const double link = 25e9 * fraction(LinkClass::kNvlink2);
  EXPECT_NEAR(run(c, task(CollectiveOp::kAllGather, range(16, 4), kGiB, Algorithm::kRing)) / (3 * (1e-6 + kGiB / 8 / link)), 1, 0.01);
  // A broadcast over one xGMI node spreads over its 6 rings (it ran at one link's 46.5 GB/s), and a
  // mid-size one over one DGX-1 pipelines in chunks smaller than NCCL's 512 KiB (one chunk a chain
  // left nothing to pipeline: 16 against the all-gather's 82 GB/s at 2 MiB).
  const Cluster mi = fixture_cluster("mi300x-2");
  EXPECT_GT(kGiB / run(mi, task(CollectiveOp::kBroadcast, range(0, 8), kGiB, Algorithm::kChain)), 200e9);
  const double mib2 = 2.0 * 1024 * 1024;
  const double ag = run(c, task(CollectiveOp::kAllGather, range(16, 8), mib2, Algorithm::kRing));
  EXPECT_LT(run(c, task(CollectiveOp::kBroadcast, range(16, 8), mib2, Algorithm::kChain)), 2.5 * ag * 8 / 7);
}

TEST(Channels, Dgx1RingsAcrossNodesAreBoundByTheNics) {
  // 2 DGX-1 V100 nodes, 8 channel rings: each GPU leaves its node in one ring and is entered in
  // one, so each of the 4 NICs (GPU i uses NIC i mod 4) sends and receives 2 rings' 2(n-1)/n S/8.
  const Cluster c = shipped_cluster("a100-v100-2x2");
  const std::vector<int> v100 = range(16, 16);
  const auto rings = channel_rings(members_by_domain(topology_order(v100, c), c), c);
  ASSERT_EQ(rings.size(), 8u);
  for (const auto& r : rings) {
    for (size_t k = 0; k < r.size(); ++k) {
      const int a = r[k], b = r[(k + 1) % r.size()];
      if (c.gpus[a].node == c.gpus[b].node) {
        EXPECT_GT(dgx1_nvlinks(6, c.gpus[a].local, c.gpus[b].local), 0) << a << " -> " << b << " has no NVLink";
      }
    }
  }
  const Crossings x = crossings(rings, c);
  for (int g : v100) {
    EXPECT_EQ(x.leaves[g], 1) << "GPU " << g;
    EXPECT_EQ(x.entered[g], 1) << "GPU " << g;
  }
  const double nic = 100e9 / 8 * fraction(LinkClass::kNic);
  const double t = run(c, task(CollectiveOp::kAllReduce, v100, kGiB, Algorithm::kRing));
  EXPECT_NEAR(t / (2 * 30.0 / 16 * kGiB / 8 / nic), 1, 0.02);
}

TEST(Channels, EveryGpuLeavesItsNodeThroughItsOwnNic) {
  // 2 nodes x 8 GPUs: 8 channel rings; ring c enters each node at local c and leaves from local
  // c-1, so each GPU sends across nodes in exactly one ring and every NIC carries traffic.
  const Cluster c = shipped_cluster("a100-8x8");
  const std::vector<int> all = range(0, 16);
  const auto rings = channel_rings(members_by_domain(all, c), c);
  ASSERT_EQ(rings.size(), 8u);
  const Crossings x = crossings(rings, c);
  for (int g = 0; g < 16; ++g) EXPECT_EQ(x.leaves[g], 1) << "GPU " << g;
  // Ring all-reduce over the channels: each NIC carries 2(n-1)/n S/8 per direction; NVSwitch
  // ports carry 7/8 of 2(n-1)/n S: 2(n-1)/n S / 8 / B_nic + 2(n-1) alpha_nic bounds it from below.
  const double t = run(c, task(CollectiveOp::kAllReduce, all, kGiB, Algorithm::kRing));
  EXPECT_NEAR(t / (30.0 / 16 * kGiB / 8 / kNicBw + 30 * kNicAlpha), 1, 0.01);
}

TEST(Channels, NodesOfUnequalMemberCountsRunAsManyRingsAsTheSmallestNodeHasMembers) {
  // 8 GPUs of one node and 4 of another (two NVL72 racks cut at 72 and 56 alike): 4 channel rings,
  // each through all 12 members, no member leaving its node in two of them. One ring over one NIC
  // (what unequal nodes ran before) would take 4 times as long.
  const Cluster c = shipped_cluster("a100-8x8");
  const std::vector<int> group = range(0, 12);
  const auto rings = channel_rings(domain_groups(group, c), c);
  ASSERT_EQ(rings.size(), 4u);
  for (const auto& r : rings) EXPECT_EQ(std::set<int>(r.begin(), r.end()).size(), 12u);
  const Crossings x = crossings(rings, c);
  for (int g = 0; g < 12; ++g) EXPECT_LE(x.leaves[g], 1) << "GPU " << g;
  for (int g = 8; g < 12; ++g) EXPECT_EQ(x.leaves[g], 1) << "GPU " << g;
  // Each of 4 NICs a node carries 2(n-1)/n S/4 per direction, n = 12.
  const double t = run(c, task(CollectiveOp::kAllReduce, group, kGiB, Algorithm::kRing));
  EXPECT_NEAR(t / (22.0 / 12 * kGiB / 4 / kNicBw + 22 * kNicAlpha), 1, 0.01);
  EXPECT_TRUE(members_by_domain(group, c).empty());  // hierarchical phases still need equal nodes
}

TEST(Channels, OnFullMeshNodesTheRingsTogetherUseEveryLinkOnce) {
  // 2 MI300X nodes: each of the 8 channel rings takes its own path through a node (Walecki's
  // zigzag and its reverse), so the rings' intra-node steps cover all 56 directed xGMI links of
  // each node once, and every GPU still leaves its node in exactly one ring. The ring all-reduce
  // is then bound by the NICs (each carries 2(n-1)/n S/8, as on NVSwitch nodes), not by one xGMI
  // link shared by 7 rings (64 GB/s x 0.727 / 7 per ring: 53 GB/s busbw before).
  const Cluster c = fixture_cluster("mi300x-2");
  const std::vector<int> all = range(0, 16);
  const auto rings = channel_rings(members_by_domain(all, c), c);
  ASSERT_EQ(rings.size(), 8u);
  std::set<std::pair<int, int>> inside;
  size_t steps_inside = 0;
  for (const auto& r : rings) {
    for (size_t k = 0; k < r.size(); ++k) {
      const int a = r[k], b = r[(k + 1) % r.size()];
      if (c.gpus[a].node == c.gpus[b].node) {
        inside.insert({a, b});
        ++steps_inside;
      }
    }
  }
  EXPECT_EQ(steps_inside, 2u * 56u);
  EXPECT_EQ(inside.size(), 2u * 56u);  // every directed link of both meshes, none twice
  const Crossings x = crossings(rings, c);
  for (int g = 0; g < 16; ++g) EXPECT_EQ(x.leaves[g], 1) << "GPU " << g;
  const double nic = 50e9 * fraction(LinkClass::kNic);
  const double t = run(c, task(CollectiveOp::kAllReduce, all, kGiB, Algorithm::kRing));
  const double nic_bound = 30.0 / 16 * kGiB / 8 / nic;
  EXPECT_GT(t, nic_bound);
  EXPECT_LT(t, 1.05 * nic_bound);
}

}  // namespace
}  // namespace hetsim
