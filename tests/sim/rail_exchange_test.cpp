// File: tests/sim/rail_exchange_test.cpp
// NCCL's PXN all-to-all held as a RailExchange (sim/rail_exchange.hpp): its estimate without its
// edges is the estimate of its edges, bit for bit, on every kind of network, links that carry both
// of its phases included.
#include "sim/rail_exchange.hpp"

#include <gtest/gtest.h>

#include "sim/channel_schedules.hpp"
#include "sim/collective.hpp"
#include "test_support.hpp"

namespace hetsim {
namespace {

Cluster with_nodes(Cluster c, int nodes) {
  for (NodeType& nt : c.node_types) nt.count = nodes;
  index_gpus(c);
  return c;
}

std::vector<int> members(const Cluster& c, int locals) {  // the first `locals` GPUs of every node
  std::vector<int> out;
  for (int g = 0; g < c.gpu_count(); ++g) {
    if (c.gpus[g].in_domain < locals) out.push_back(g);
  }
  return out;
}

TEST(RailExchange, ItsEstimateIsThatOfItsEdgesBitForBitOnEveryNetwork) {
  std::vector<std::pair<std::string, Cluster>> clusters;
  clusters.emplace_back("fat tree", with_nodes(test::shipped_cluster("a100-8x8"), 16));
  Cluster oversubscribed = with_nodes(test::shipped_cluster("selene-64"), 16);
  oversubscribed.network.oversubscription = 3;
  oversubscribed.network.nodes_per_leaf = 4;
  clusters.emplace_back("oversubscribed fat tree", oversubscribed);
  clusters.emplace_back("three-tier clos", with_nodes(test::shipped_cluster("meta-h100-24k"), 12));
  clusters.emplace_back("NVL72 domains", test::shipped_cluster("gb200-nvl72-16"));
  clusters.emplace_back("graph", test::shipped_cluster("graph-h100-4"));
  Cluster planes = with_nodes(test::shipped_cluster("selene-64"), 6);
  planes.network.topology = NetTopology::kRailOptimized;
  planes.network.planes = 4;
  clusters.emplace_back("rail-optimized, 4 planes", planes);
  for (const auto& [name, c] : clusters) {
    const Fabric fabric(c);
    int compared = 0;
    for (int locals : {8, 2}) {
      for (double bytes : {1024.0, 16.0 * 1024 * 1024, 256.0 * 1024 * 1024, 3e9}) {  // 1, 4 and 8 pipeline pieces
        const CollectiveTask t = collective(CollectiveOp::kAllToAll, members(c, locals), bytes);
        if (!unsupported_reason(t, Algorithm::kPxn, c).empty()) continue;
        const std::vector<Schedule> s = collective_schedules(t, Algorithm::kPxn, c);
        ASSERT_EQ(s.size(), 1U);
        ASSERT_FALSE(s.front().rails.nodes.empty()) << name;
        const std::optional<double> fast = rail_exchange_step_estimate(s.front().rails, fabric);
        ASSERT_TRUE(fast.has_value()) << name;
        const Schedule edges = expanded(s.front().rails);
        EXPECT_EQ(*fast, step_estimate(edges, fabric)) << name << ", " << locals << " GPUs a node, " << bytes << " bytes";
        EXPECT_EQ(step_estimate(s.front(), fabric), *fast);
        EXPECT_EQ(s.front().rounds(), edges.rounds());
        EXPECT_GT(*fast, 0);
        ++compared;
      }
    }
    EXPECT_EQ(compared, 8) << name;  // every size, whole nodes and two rails
  }
}

TEST(RailExchange, ALargeExchangeEstimatedOnAllCoresIsItsEdgesEstimateBitForBit) {
  // 192 nodes of 8: 293 376 inter-node transfers, enough for both passes to run on every core.
  Cluster c = with_nodes(test::shipped_cluster("selene-64"), 192);
  c.network.oversubscription = 3;  // shared links of unequal loads: the slowest transfer matters
  c.network.nodes_per_leaf = 4;
  const Fabric fabric(c);
  const CollectiveTask t = collective(CollectiveOp::kAllToAll, members(c, 8), 256.0 * 1024 * 1024);
  ASSERT_EQ(unsupported_reason(t, Algorithm::kPxn, c), "");
  const std::vector<Schedule> s = collective_schedules(t, Algorithm::kPxn, c);
  ASSERT_EQ(s.size(), 1U);
  const std::optional<double> fast = rail_exchange_step_estimate(s.front().rails, fabric);
  ASSERT_TRUE(fast.has_value());
  EXPECT_EQ(*fast, step_estimate(expanded(s.front().rails), fabric));
  EXPECT_EQ(*rail_exchange_step_estimate(s.front().rails, fabric), *fast);  // and again: the same
}

TEST(RailExchange, ALinkCarryingBothPhasesAddsItsLoadInTheOrderOfTheEdges) {
  // "Nodes" that cross the real ones: GPU 0's NIC carries its intra-phase send to GPU 8 and its
  // inter-phase send to GPU 9, so that link's load adds bytes of both phases, in the order of the
  // round group where both run. So do NVLink-mesh nodes (DGX-1), whose NIC traffic and relayed
  // NVLink traffic share links.
  const Cluster c = test::shipped_cluster("a100-8x8");
  const Fabric fabric(c);
  RailExchange x{{{0, 8}, {9, 1}}, 1e6 / 3, 4};
  ASSERT_TRUE(rail_exchange_step_estimate(x, fabric).has_value());
  EXPECT_EQ(*rail_exchange_step_estimate(x, fabric), step_estimate(expanded(x), fabric));
  Schedule s;
  s.rails = x;
  EXPECT_EQ(step_estimate(s, fabric), step_estimate(expanded(x), fabric));
  EXPECT_GT(step_estimate(s, fabric), 0);
  Cluster mesh = test::shipped_cluster("a100-v100-2x2");
  mesh.node_types[1].count = 6;
  index_gpus(mesh);
  const Fabric mesh_fabric(mesh);
  std::vector<int> v100;
  for (int gpu = 0; gpu < mesh.gpu_count(); ++gpu) {
    if (mesh.gpus[gpu].node_type == 1) v100.push_back(gpu);
  }
  for (double bytes : {1024.0, 16.0 * 1024 * 1024, 256.0 * 1024 * 1024}) {
    const CollectiveTask t = collective(CollectiveOp::kAllToAll, v100, bytes);
    ASSERT_EQ(unsupported_reason(t, Algorithm::kPxn, mesh), "");
    const std::vector<Schedule> pxn = collective_schedules(t, Algorithm::kPxn, mesh);
    EXPECT_EQ(step_estimate(pxn.front(), mesh_fabric), step_estimate(expanded(pxn.front().rails), mesh_fabric)) << bytes;
  }
  // What a simulation runs: the same flows as the edges.
  const std::vector<Flow> a = merged_flows(s), b = merged_flows(expanded(x));
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(a[i].src == b[i].src && a[i].dst == b[i].dst && a[i].bytes == b[i].bytes);
  EXPECT_EQ(round_groups(s).size(), round_groups(expanded(x)).size());
}

}  // namespace
}  // namespace hetsim
