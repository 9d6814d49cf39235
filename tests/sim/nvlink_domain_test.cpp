// File: tests/sim/nvlink_domain_test.cpp
// Rack-scale NVLink domains (a node type's nvlink_domain): GPUs of several nodes that reach each
// other over one NVLink switch fabric, as in a GB200 NVL72 rack, against the same groups on 8-GPU
// nodes whose NICs carry everything between nodes.
#include <gtest/gtest.h>

#include "sim/collective.hpp"
#include "sim/executor.hpp"
#include "test_support.hpp"
#include "topologies/fabric.hpp"
#include "topologies/link_class.hpp"

namespace hetsim {
namespace {

using test::shipped_cluster;

std::vector<int> first(int n) {
  std::vector<int> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<size_t>(i)] = i;
  return v;
}

double all_reduce(const Cluster& c, const std::vector<int>& group, double bytes, Algorithm a) {
  CollectiveTask t = collective(CollectiveOp::kAllReduce, group, bytes);
  t.algorithm = a;
  Program p;
  p.devices.resize(c.gpu_count());
  p.add({"allreduce", t, {}});
  return simulate(p, c, SimOptions{Fidelity::kPhase, false}).iteration_time_s;
}

// The GB200 rack as 8-GPU nodes instead: the same GPUs, NVLink and NICs per GPU, no shared domain.
Cluster as_nvl8_nodes(Cluster c) {
  NodeType& nt = c.node_types.front();
  nt.count = nt.count / 2;
  nt.gpus_per_node = 8;
  nt.nvlink_domain = 8;
  nt.nic.count = 8;
  index_gpus(c);
  return c;
}

TEST(NvlinkDomain, EveryRackOfTraysIsOneDomain) {
  const Cluster c = shipped_cluster("gb200-nvl72-16");
  ASSERT_EQ(c.gpu_count(), 1152);
  EXPECT_EQ(c.node_count(), 288);
  EXPECT_EQ(c.domain_count(), 16);
  EXPECT_EQ(c.gpus[71].domain, 0);
  EXPECT_EQ(c.gpus[71].in_domain, 71);
  EXPECT_EQ(c.gpus[71].node, 17);
  EXPECT_EQ(c.gpus[72].domain, 1);
  EXPECT_EQ(c.gpus[72].in_domain, 0);
  EXPECT_TRUE(c.same_domain(0, 71));
  EXPECT_FALSE(c.same_domain(71, 72));
}

TEST(NvlinkDomain, TraysOfOneRackRouteOverNvlinkAndRacksOverNics) {
  const Cluster c = shipped_cluster("gb200-nvl72-16");
  const Fabric f(c);
  auto kinds = [&](const Route& r) {
    std::vector<LinkKind> out;
    for (int l : r.links) out.push_back(f.links()[l].kind);
    return out;
  };
  const Route in_rack = f.route(0, 68);  // tray 0 to tray 17
  EXPECT_EQ(kinds(in_rack), (std::vector<LinkKind>{LinkKind::kGpuPort, LinkKind::kGpuPort}));
  EXPECT_DOUBLE_EQ(f.bottleneck_Bps(in_rack), 900e9 * achievable_table()[static_cast<int>(LinkClass::kNvlink5)].fraction);
  const std::vector<LinkKind> across = kinds(f.route(0, 72));  // rack 0 to rack 1, rail 0
  EXPECT_NE(std::find(across.begin(), across.end(), LinkKind::kNic), across.end());
}

TEST(NvlinkDomain, Tp16AllReduceInsideAnNvl72RunsAtNvlinkSpeedAndAcrossNvl8NodesThroughNics) {
  const Cluster rack = shipped_cluster("gb200-nvl72-16");
  const double bytes = 256.0 * 1024 * 1024;
  const double nvlink = 900e9 * achievable_table()[static_cast<int>(LinkClass::kNvlink5)].fraction;
  // A ring over 16 GPUs of 4 trays: every hop one GPU port up and one down, 1 us in all.
  const double expect = ring_allreduce_time(16, bytes, nvlink, 1e-6);
  EXPECT_NEAR(all_reduce(rack, first(16), bytes, Algorithm::kRing) / expect, 1, 0.01);
  EXPECT_LE(all_reduce(rack, first(16), bytes, Algorithm::kAuto), expect * 1.01);
  // The same 16 GPUs as two 8-GPU nodes: what crosses between the nodes goes through the 400 Gb/s
  // NICs. At best (hierarchical, every NIC busy) each GPU sends 2 (n - 1)/n of its 1/8 share of the
  // buffer over its NIC, n = 2 nodes: bytes / 8 at the NIC's rate, as long as the whole ring in
  // the rack; the NVLink phases come on top.
  const Cluster nodes = as_nvl8_nodes(rack);
  const double nic = 400e9 / 8 * achievable_table()[static_cast<int>(LinkClass::kNic)].fraction;
  const double through_nics = all_reduce(nodes, first(16), bytes, Algorithm::kAuto);
  EXPECT_GE(through_nics, bytes / 8 / nic);
  EXPECT_GT(through_nics, 1.5 * expect);
}

}  // namespace
}  // namespace hetsim
