// File: tests/topologies/fabric_test.cpp
// Which links a route crosses, fabric by fabric.
#include "topologies/fabric.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "test_support.hpp"
#include "topologies/link_class.hpp"

namespace hetsim {
namespace {

using test::fixture_cluster;
using test::shipped_cluster;

// The smallest wire rate on a route: what the wiring gives, before achievable fractions.
double wire_bottleneck(const Fabric& f, const Route& r) {
  double b = 1e300;
  for (int l : r.links) b = std::min(b, f.links()[l].wire_Bps);
  return b;
}

std::vector<LinkKind> kinds(const Fabric& f, const Route& r) {
  std::vector<LinkKind> out;
  for (int l : r.links) out.push_back(f.links()[l].kind);
  return out;
}

TEST(Fabric, NvswitchIsAStarOfGpuPorts) {
  const Cluster c = shipped_cluster("a100-8x8");
  const Fabric f(c);
  const Route r = f.route(0, 5);
  EXPECT_EQ(kinds(f, r), (std::vector<LinkKind>{LinkKind::kGpuPort, LinkKind::kGpuPort}));
  EXPECT_DOUBLE_EQ(wire_bottleneck(f, r), 300e9);
  EXPECT_NEAR(r.latency_s, 1e-6, 1e-15);
}

TEST(Fabric, Dgx1V100MeshUsesDirectNvlinksOrTheHost) {
  const Cluster c = shipped_cluster("a100-v100-2x2");  // GPUs 16..23: first DGX-1 V100
  const Fabric f(c);
  const Route double_link = f.route(16 + 0, 16 + 3);  // NV2: 2 x 25 GB/s
  EXPECT_EQ(kinds(f, double_link), std::vector<LinkKind>{LinkKind::kNvlink});
  EXPECT_DOUBLE_EQ(wire_bottleneck(f, double_link), 50e9);
  EXPECT_DOUBLE_EQ(wire_bottleneck(f, f.route(16 + 0, 16 + 1)), 25e9);  // NV1
  const Route no_link = f.route(16 + 0, 16 + 5);  // not wired: PCIe -> host -> PCIe
  EXPECT_EQ(kinds(f, no_link), (std::vector<LinkKind>{LinkKind::kPcie, LinkKind::kSwitch, LinkKind::kPcie}));
  EXPECT_DOUBLE_EQ(wire_bottleneck(f, no_link), 16e9);
  const auto& ring = dgx1_ring();  // every hop of the ring order is wired
  for (size_t i = 0; i < ring.size(); ++i) EXPECT_GT(dgx1_nvlinks(6, ring[i], ring[(i + 1) % 8]), 0);
  int per_gpu = 0;
  for (int b = 0; b < 8; ++b) per_gpu += dgx1_nvlinks(6, 2, b);
  EXPECT_EQ(per_gpu, 6);
}

TEST(Fabric, Dgx1P100MeshHasSingleLinks) {
  const Cluster c = shipped_cluster("hap-v100-p100");  // GPUs 16.. are P100
  const Fabric f(c);
  EXPECT_DOUBLE_EQ(wire_bottleneck(f, f.route(16 + 0, 16 + 4)), 20e9);  // 80 GB/s over 4 links
  EXPECT_EQ(kinds(f, f.route(16 + 1, 16 + 4))[0], LinkKind::kPcie);
}

TEST(Fabric, XgmiMeshHasOneLinkPerPeer) {
  const Cluster c = fixture_cluster("mi300x-2");
  const Fabric f(c);
  const Route r = f.route(2, 6);
  EXPECT_EQ(kinds(f, r), std::vector<LinkKind>{LinkKind::kXgmi});
  EXPECT_DOUBLE_EQ(wire_bottleneck(f, r), 64e9);
  EXPECT_NE(f.route(2, 6).links, f.route(2, 7).links);  // distinct links, no shared switch
}

TEST(Fabric, PcieNodesShareTheHostBridge) {
  const Cluster c = fixture_cluster("pcie-2x4");
  const Fabric f(c);
  EXPECT_EQ(kinds(f, f.route(0, 1)), (std::vector<LinkKind>{LinkKind::kPcie, LinkKind::kHostBridge, LinkKind::kPcie}));
  EXPECT_EQ(f.route(0, 1).links[1], f.route(2, 3).links[1]);
  EXPECT_EQ(kinds(f, f.route(0, 4)),
            (std::vector<LinkKind>{LinkKind::kPcie, LinkKind::kHostBridge, LinkKind::kNic, LinkKind::kSwitch, LinkKind::kNic,
                                   LinkKind::kHostBridge, LinkKind::kPcie}));
}

TEST(Fabric, FatTreeCrossesTheSpineOnlyBetweenLeaves) {
  const Cluster c = fixture_cluster("fat-tree-2to1");
  const Fabric f(c);
  const Route same_leaf = f.route(0, 8);
  const Route cross = f.route(0, 16);
  EXPECT_EQ(kinds(f, same_leaf), (std::vector<LinkKind>{LinkKind::kPcie, LinkKind::kNic, LinkKind::kSwitch, LinkKind::kNic, LinkKind::kPcie}));
  EXPECT_EQ(kinds(f, cross), (std::vector<LinkKind>{LinkKind::kPcie, LinkKind::kNic, LinkKind::kLeafUplink, LinkKind::kSpine,
                                                    LinkKind::kLeafUplink, LinkKind::kNic, LinkKind::kPcie}));
  // Leaf uplink: 2 nodes x 8 NICs x 25 GB/s / 2, at the NICs' achievable fraction (same link class).
  EXPECT_DOUBLE_EQ(f.links()[cross.links[2]].bandwidth_Bps, 200e9 * nic_achievable(c.node_types[0]).fraction);
  EXPECT_NEAR(cross.latency_s - same_leaf.latency_s, 2e-6, 1e-15);  // two more switch hops
}

TEST(Fabric, RailOptimizedKeepsSameRailTrafficOnItsRail) {
  const Cluster c = shipped_cluster("h100-mi300x");
  const Fabric f(c);
  EXPECT_EQ(kinds(f, f.route(3, 8 + 3))[2], LinkKind::kSwitch);      // NIC 3 -> rail 3 -> NIC 3
  EXPECT_EQ(kinds(f, f.route(3, 8 + 4))[2], LinkKind::kRailUplink);  // rail 3 -> spine -> rail 4
}

TEST(Fabric, CrossVendorTrafficIsStagedUnlessRdma) {
  Cluster c = shipped_cluster("a100-mi250x");
  EXPECT_TRUE(Fabric(c).staged(0, 16));
  EXPECT_FALSE(Fabric(c).staged(0, 8));
  c.network.cross_vendor_rdma = true;
  EXPECT_FALSE(Fabric(c).staged(0, 16));
  const Fabric f(c);
  // Staging legs: the GPU's PCIe link, then NIC to NIC.
  EXPECT_EQ(kinds(f, f.route(0, f.staging(0))), std::vector<LinkKind>{LinkKind::kPcie});
  EXPECT_EQ(kinds(f, f.route(f.staging(0), f.staging(16))).front(), LinkKind::kNic);
}

}  // namespace
}  // namespace hetsim

namespace hetsim {
namespace {

TEST(Fabric, DisjointRingsUseEveryMeshLinkOnce) {
  for (const auto& [name, gpu] : {std::pair<std::string, int>{"a100-v100-2x2", 16}, {"hap-v100-p100", 16}}) {
    const Cluster c = load_cluster(test::shipped("topologies", name));
    const NodeType& nt = c.node_type_of_gpu(gpu);
    std::map<std::pair<int, int>, int> used;
    for (const auto& ring : disjoint_rings(nt)) {
      for (int i = 0; i < 8; ++i) used[std::minmax(ring[i], ring[(i + 1) % 8])]++;
    }
    int links = 0;
    for (const auto& [pair, n] : used) {
      EXPECT_LE(n, dgx1_nvlinks(nt.intra.links, pair.first, pair.second)) << name << " " << pair.first << "-" << pair.second;
      links += n;
    }
    EXPECT_EQ(links, 8 * nt.intra.links / 2) << name;  // every NVLink in exactly one ring
  }
  const Cluster mi = test::fixture_cluster("mi300x-2");
  std::set<std::pair<int, int>> pairs;
  for (const auto& ring : disjoint_rings(mi.node_types[0])) {
    for (int i = 0; i < 8; ++i) EXPECT_TRUE(pairs.insert(std::minmax(ring[i], ring[(i + 1) % 8])).second);
  }
  EXPECT_EQ(pairs.size(), 24u);
  EXPECT_TRUE(disjoint_rings(load_cluster(test::shipped("topologies", "a100-8x8")).node_types[0]).empty());
}

TEST(Fabric, LinksRunAtTheirClassFraction) {
  // A100 NVSwitch ports at NVLink3's fraction, NICs and uplinks at the NIC's, PCIe at PCIe's.
  const Cluster c = shipped_cluster("a100-8x8");
  const Fabric f(c);
  const double nvlink3 = intra_achievable(c.node_types[0]).fraction;
  EXPECT_EQ(intra_achievable(c.node_types[0]).link_class, LinkClass::kNvlink3);
  EXPECT_DOUBLE_EQ(f.bottleneck_Bps(f.route(0, 5)), 300e9 * nvlink3);
  const Route across = f.route(0, 8);  // PCIe 32 GB/s, NIC 25 GB/s
  EXPECT_DOUBLE_EQ(f.bottleneck_Bps(across), std::min(32e9 * pcie_achievable(c.node_types[0]).fraction,
                                                      25e9 * nic_achievable(c.node_types[0]).fraction));
  for (const FabricLink& l : f.links()) EXPECT_DOUBLE_EQ(l.bandwidth_Bps, l.wire_Bps * l.achievable) << l.name;
}

TEST(Fabric, AProfilesLinkExcessSlowsTheClassDefaultsButNotAStatedFraction) {
  // A calibration profile's nic_time_excess and intra_time_excess: the node's NICs (and the uplinks
  // of their class) and its GPU links run at the table's fraction / (1 + excess), said with the
  // profile's name; the host's PCIe links keep theirs; a fraction the cluster file states stands.
  const Cluster plain = shipped_cluster("a100-8x8");
  Cluster c = plain;
  for (NodeType& nt : c.node_types) {
    nt.gpu.fitted.nic_time_excess = 0.25;
    nt.gpu.fitted.intra_time_excess = 0.5;
    nt.gpu.calibration = "lab-2026";
  }
  const NodeType& n = c.node_types[0];
  EXPECT_DOUBLE_EQ(nic_achievable(n).fraction, nic_achievable(plain.node_types[0]).fraction / 1.25);
  EXPECT_DOUBLE_EQ(intra_achievable(n).fraction, intra_achievable(plain.node_types[0]).fraction / 1.5);
  EXPECT_DOUBLE_EQ(pcie_achievable(n).fraction, pcie_achievable(plain.node_types[0]).fraction);
  EXPECT_NE(nic_achievable(n).source.find("nic_time_excess of the calibration profile in force on A100-SXM4-40GB, lab-2026"), std::string::npos)
      << nic_achievable(n).source;
  const Fabric f(c), g(plain);
  EXPECT_DOUBLE_EQ(f.bottleneck_Bps(f.route(0, 5)), g.bottleneck_Bps(g.route(0, 5)) / 1.5);
  for (const FabricLink& l : f.links()) EXPECT_DOUBLE_EQ(l.bandwidth_Bps, l.wire_Bps * l.achievable) << l.name;
  Cluster stated = c;
  stated.node_types[0].nic.achievable = 0.8;
  stated.node_types[0].nic.achievable_source = "ib_write_bw, our lab";
  EXPECT_DOUBLE_EQ(nic_achievable(stated.node_types[0]).fraction, 0.8);
  EXPECT_EQ(nic_achievable(stated.node_types[0]).source, "ib_write_bw, our lab");
}

TEST(Fabric, SwitchEndpointsExistOnlyWhereTheSwitchReduces) {
  const Cluster h100 = shipped_cluster("h100-mi300x");  // nodes 0, 1: DGX H100; 2, 3: MI300X
  const Fabric f(h100);
  EXPECT_TRUE(f.has_switch_reduction(0));
  EXPECT_FALSE(f.has_switch_reduction(2));
  EXPECT_EQ(kinds(f, f.route(3, f.switch_port(0))), std::vector<LinkKind>{LinkKind::kGpuPort});
  EXPECT_EQ(kinds(f, f.route(f.switch_reduce(0), 3)), (std::vector<LinkKind>{LinkKind::kSwitchReduce, LinkKind::kGpuPort}));
  EXPECT_THROW((void)f.route(20, f.switch_port(0)), std::logic_error);  // not a GPU of node 0
  const Fabric a100(shipped_cluster("a100-8x8"));
  EXPECT_FALSE(a100.has_switch_reduction(0));  // NVSwitch gen2 has no NVLink SHARP
}

TEST(Fabric, MultiPlaneRailsForwardOverNvlinkToTheDestinationsPlane) {
  const Cluster c = fixture_cluster("multi-plane-h100");
  const Fabric f(c);
  // GPU 0 (rail 0, plane 0) to GPU 9 (node 1, rail 1, plane 1): no link between the planes, so the
  // data crosses NVLink to GPU 1, whose NIC is on rail 1, and takes rail 1's switch.
  EXPECT_EQ(kinds(f, f.route(0, 9)), (std::vector<LinkKind>{LinkKind::kGpuPort, LinkKind::kGpuPort, LinkKind::kPcie, LinkKind::kNic,
                                                            LinkKind::kSwitch, LinkKind::kNic, LinkKind::kPcie}));
  EXPECT_EQ(f.route(0, 9).links[2], f.route(1, 9).links[0]);  // GPU 1's PCIe link: GPU 1 sends it on
  // The same rail needs no forwarding.
  EXPECT_EQ(kinds(f, f.route(1, 9)), (std::vector<LinkKind>{LinkKind::kPcie, LinkKind::kNic, LinkKind::kSwitch, LinkKind::kNic, LinkKind::kPcie}));
  // One plane (the default): rails meet at the spine.
  Cluster one = c;
  one.network.planes = 1;
  const Fabric g(one);
  EXPECT_EQ(kinds(g, g.route(0, 9)), (std::vector<LinkKind>{LinkKind::kPcie, LinkKind::kNic, LinkKind::kRailUplink, LinkKind::kSpine,
                                                            LinkKind::kRailUplink, LinkKind::kNic, LinkKind::kPcie}));
}

TEST(Fabric, GraphNetworksRouteByShortestPathsAndSpreadPairsOverEqualOnes) {
  const Cluster c = shipped_cluster("graph-h100-4");  // leaves 0, 1 under spines 0, 1
  const Fabric f(c);
  // Inside a leaf: NIC, the leaf, NIC.
  EXPECT_EQ(kinds(f, f.route(0, 8)), (std::vector<LinkKind>{LinkKind::kPcie, LinkKind::kNic, LinkKind::kSwitch, LinkKind::kNic, LinkKind::kPcie}));
  // Across leaves: leaf, cable, a spine, cable, leaf: 3 switches and 2 cables of 8 x 400 Gb/s.
  const Route across = f.route(0, 16);
  EXPECT_EQ(kinds(f, across), (std::vector<LinkKind>{LinkKind::kPcie, LinkKind::kNic, LinkKind::kSwitch, LinkKind::kCable, LinkKind::kSwitch,
                                                     LinkKind::kCable, LinkKind::kSwitch, LinkKind::kNic, LinkKind::kPcie}));
  EXPECT_DOUBLE_EQ(f.links()[across.links[3]].wire_Bps, 8 * 400e9 / 8);
  EXPECT_NEAR(across.latency_s, 2e-6 + 3e-6 + 2e-6 + 2e-6, 1e-15);  // NICs, switches, cables
  // ECMP: the 256 GPU pairs from node 0 and 1 to nodes 2 and 3 take both spines, about half each;
  // a pair always takes the same.
  std::map<std::string, int> spine;
  for (int a = 0; a < 16; ++a) {
    for (int b = 16; b < 32; ++b) {
      const Route r = f.route(a, b);
      ++spine[f.links()[r.links[4]].name];
      EXPECT_EQ(f.route(a, b).links, r.links);
    }
  }
  ASSERT_EQ(spine.size(), 2u);
  for (const auto& [name, n] : spine) EXPECT_NEAR(n, 128, 32) << name;
}

TEST(Fabric, AGraphRestrictedToOneNodeTypeKeepsItsNodesPlaces) {
  Cluster c = shipped_cluster("graph-h100-4");
  c.node_types.front().count = 2;
  NodeType second = c.node_types.front();
  second.name = "second";
  c.node_types.push_back(second);
  index_gpus(c);
  const Cluster later = c.only_node_type(1);  // nodes 2 and 3 of the graph, now nodes 0 and 1
  EXPECT_EQ(later.network.graph_nodes, (std::vector<int>{2, 3}));
  const Fabric f(later);
  EXPECT_EQ(kinds(f, f.route(0, 8)), (std::vector<LinkKind>{LinkKind::kPcie, LinkKind::kNic, LinkKind::kSwitch, LinkKind::kNic, LinkKind::kPcie}));
}

}  // namespace
}  // namespace hetsim
