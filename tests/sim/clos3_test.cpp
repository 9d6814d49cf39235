// File: tests/sim/clos3_test.cpp
// Three-tier Clos networks (topology: clos3) under full load, against their closed forms: every
// GPU sends 1 GB at once, inside its leaf, across leaves of its pod, or across pods through the
// core that carries 1/7 of what the pods send up.
#include <gtest/gtest.h>

#include "sim/executor.hpp"
#include "test_support.hpp"
#include "topologies/fabric.hpp"
#include "topologies/link_class.hpp"

namespace hetsim {
namespace {

using test::fixture_cluster;

constexpr double kBytes = 1e9;

// Every one of the 64 GPUs sends kBytes to GPU g xor `mask` (its partner on another node), all at
// once: mask 8 pairs nodes inside a leaf, 16 leaves inside a pod, 32 the two pods.
double full_load(const Cluster& c, int mask) {
  Program p;
  p.devices.resize(c.gpu_count());
  for (int g = 0; g < c.gpu_count(); ++g) p.add({"s", SendTask{g, g ^ mask, kBytes}, {}});
  return simulate(p, c).iteration_time_s;
}

TEST(Clos3, CrossingTheCoreAtOneToSevenTakesSevenTimesAsLongAsInsideALeaf) {
  const Cluster c = fixture_cluster("clos3-1to7");
  ASSERT_EQ(c.gpu_count(), 64);
  // Each GPU's flow leaves through its own 200 Gb/s NIC (PCIe Gen4 at 0.8 x 32 GB/s is faster).
  const double nic = 200e9 / 8 * achievable_table()[static_cast<int>(LinkClass::kNic)].fraction;
  // Inside a leaf (node 0 <-> node 1, 2 <-> 3, ...): NIC, leaf crossbar, NIC: 2 + 1 + 2 us.
  const double leaf = full_load(c, 8);
  EXPECT_NEAR(leaf / (5e-6 + kBytes / nic), 1, 0.005);
  // Across the leaves of a pod (nodes 0, 1 <-> 2, 3, ...): the leaf uplinks carry all 16 NICs' flows at
  // 1:1; NIC, leaf up, pod spine, leaf down, NIC: 2 + 3 + 2 us.
  const double pod = full_load(c, 16);
  EXPECT_NEAR(pod / (7e-6 + kBytes / nic), 1, 0.005);
  // Across pods: 64 flows share the core's 64 x nic / 7; NIC, leaf up, pod up, core, pod down,
  // leaf down, NIC: 2 + 5 + 2 us.
  const double core = full_load(c, 32);
  EXPECT_NEAR(core / (9e-6 + 7 * kBytes / nic), 1, 0.005);
  EXPECT_NEAR((core - 9e-6) / (leaf - 5e-6), 7, 0.05);
}

TEST(Clos3, RoutesClimbOnlyAsHighAsTheyMust) {
  const Cluster c = fixture_cluster("clos3-1to7");
  const Fabric f(c);
  auto kinds = [&](int a, int b) {
    std::vector<LinkKind> out;
    for (int l : f.route(a, b).links) out.push_back(f.links()[l].kind);
    return out;
  };
  const std::vector<LinkKind> up_to_core{LinkKind::kPcie,      LinkKind::kNic,  LinkKind::kLeafUplink, LinkKind::kPodUplink,
                                         LinkKind::kCore,      LinkKind::kPodUplink, LinkKind::kLeafUplink, LinkKind::kNic,
                                         LinkKind::kPcie};
  EXPECT_EQ(kinds(0, 32), up_to_core);
  const std::vector<LinkKind> in_pod{LinkKind::kPcie, LinkKind::kNic, LinkKind::kLeafUplink, LinkKind::kSpine,
                                     LinkKind::kLeafUplink, LinkKind::kNic, LinkKind::kPcie};
  EXPECT_EQ(kinds(0, 16), in_pod);
  const std::vector<LinkKind> in_leaf{LinkKind::kPcie, LinkKind::kNic, LinkKind::kSwitch, LinkKind::kNic, LinkKind::kPcie};
  EXPECT_EQ(kinds(0, 8), in_leaf);
}

}  // namespace
}  // namespace hetsim
