// File: tests/topologies/network_graph_test.cpp
// Graph files: shortest paths, ECMP splits, parallel cables, and the messages for bad files.
#include "topologies/network_graph.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "base/input_error.hpp"
#include "base/temp_dir.hpp"

namespace hetsim {
namespace {

// `count` nodes of `gpus` GPUs and `nics` NICs, numbered GPU after GPU.
std::vector<GraphNodeInfo> nodes_of(int count, int gpus, int nics) {
  std::vector<GraphNodeInfo> out;
  for (int n = 0; n < count; ++n) out.push_back(GraphNodeInfo{nics, n * gpus, gpus});
  return out;
}

int switch_index(const NetworkGraph& g, const std::string& name) {
  for (size_t i = 0; i < g.switches().size(); ++i) {
    if (g.switches()[i] == name) return static_cast<int>(i);
  }
  throw std::runtime_error("no switch " + name);
}

std::vector<std::string> link_names(const NetworkGraph& g, const NetworkGraph::Path& p) {
  std::vector<std::string> out;
  for (int l : p.links) out.push_back(g.links()[l].name);
  return out;
}

// The message of the InputError that loading `yaml` throws, with the file's path written {file}.
std::string load_error(const std::string& yaml, const std::vector<GraphNodeInfo>& nodes) {
  const TempDir dir("network-graph-test");
  const std::filesystem::path file = dir.new_file("graph", ".yaml", yaml);
  try {
    (void)load_network_graph(file, nodes);
  } catch (const InputError& e) {
    std::string text = e.what();
    for (size_t at = text.find(file.string()); at != std::string::npos; at = text.find(file.string(), at)) {
      text.replace(at, file.string().size(), "{file}");
    }
    return text;
  }
  return "(no error)";
}

NetworkGraph load(const std::string& yaml, const std::vector<GraphNodeInfo>& nodes) {
  const TempDir dir("network-graph-test");
  return load_network_graph(dir.new_file("graph", ".yaml", yaml), nodes);
}

// Two leaves under two spines; node 0 on leaf0, node 1 on leaf1.
constexpr const char* kTwoSpines = R"(switches: [leaf0, leaf1, spine0, spine1]
links:
  - {between: [leaf0, spine0], bandwidth: 400Gbps, latency: 1us}
  - {between: [leaf0, spine1], bandwidth: 400Gbps, latency: 1us}
  - {between: [leaf1, spine0], bandwidth: 400Gbps, latency: 1us}
  - {between: [leaf1, spine1], bandwidth: 400Gbps, latency: 1us}
attach:
  - {nodes: 0, switch: leaf0}
  - {nodes: 1, switch: leaf1}
)";

TEST(NetworkGraph, RoutesByTheFewestHops) {
  // leaf0 - s1 - leaf1 (2 hops) and the detour leaf0 - d1 - d2 - leaf1 (3 hops).
  const NetworkGraph g = load(R"(switches: [leaf0, s1, leaf1, d1, d2]
links:
  - {between: [leaf0, s1], bandwidth: 400Gbps, latency: 1us}
  - {between: [s1, leaf1], bandwidth: 200Gbps, latency: 2us}
  - {between: [leaf0, d1], bandwidth: 800Gbps, latency: 1us}
  - {between: [d1, d2], bandwidth: 800Gbps, latency: 1us}
  - {between: [d2, leaf1], bandwidth: 800Gbps, latency: 1us}
attach:
  - {nodes: 0, switch: leaf0}
  - {nodes: 1, switch: leaf1}
)",
                              nodes_of(2, 8, 1));
  const int leaf0 = switch_index(g, "leaf0"), leaf1 = switch_index(g, "leaf1");
  EXPECT_EQ(g.attached(0, 0), leaf0);
  EXPECT_EQ(g.attached(1, 0), leaf1);
  ASSERT_EQ(g.links().size(), 10u);  // 5 cables, 2 directions each
  for (std::uint64_t flow : {0ULL, 1ULL, 77ULL, ~0ULL}) {
    const NetworkGraph::Path p = g.path(leaf0, leaf1, flow);
    EXPECT_EQ(link_names(g, p), (std::vector<std::string>{"leaf0->s1", "s1->leaf1"}));
    EXPECT_EQ(p.switches, (std::vector<int>{leaf0, switch_index(g, "s1"), leaf1}));
  }
  // 400 Gbps = 50e9 B/s, 200 Gbps = 25e9 B/s, per direction.
  const NetworkGraph::Path back = g.path(leaf1, leaf0, 5);
  EXPECT_EQ(link_names(g, back), (std::vector<std::string>{"leaf1->s1", "s1->leaf0"}));
  EXPECT_DOUBLE_EQ(g.links()[back.links[0]].bandwidth_Bps, 25e9);
  EXPECT_DOUBLE_EQ(g.links()[back.links[1]].bandwidth_Bps, 50e9);
  EXPECT_DOUBLE_EQ(g.links()[back.links[0]].latency_s, 2e-6);
  EXPECT_EQ(g.links()[4].name, "leaf0->d1");  // cable 2, first direction: link 2 x 2
  EXPECT_DOUBLE_EQ(g.links()[4].bandwidth_Bps, 100e9);  // 800 Gbps
  EXPECT_EQ(g.path_count(leaf0, leaf1), 1);
  // From an unattached switch: d1 -> d2 -> leaf1 (2 hops) beats d1 -> leaf0 -> s1 -> leaf1.
  EXPECT_EQ(link_names(g, g.path(switch_index(g, "d1"), leaf1, 3)), (std::vector<std::string>{"d1->d2", "d2->leaf1"}));
  const NetworkGraph::Path here = g.path(leaf0, leaf0, 9);
  EXPECT_TRUE(here.links.empty());
  EXPECT_EQ(here.switches, std::vector<int>{leaf0});
  EXPECT_THROW((void)g.path(leaf0, switch_index(g, "s1"), 0), std::logic_error);  // no NIC on s1
  EXPECT_THROW((void)g.attached(2, 0), std::out_of_range);
}

TEST(NetworkGraph, EcmpSplitsFlowsOverEqualPaths) {
  const NetworkGraph g = load(kTwoSpines, nodes_of(2, 8, 1));
  const int leaf0 = switch_index(g, "leaf0"), leaf1 = switch_index(g, "leaf1");
  EXPECT_EQ(g.path_count(leaf0, leaf1), 2);
  int via_spine0 = 0;
  for (std::uint64_t flow = 0; flow < 1000; ++flow) {
    const NetworkGraph::Path p = g.path(leaf0, leaf1, flow);
    ASSERT_EQ(p.switches.size(), 3u);
    EXPECT_EQ(p.links, g.path(leaf0, leaf1, flow).links);  // same flow, same path
    if (p.switches[1] == switch_index(g, "spine0")) ++via_spine0;
  }
  // Expected 500 of 1000 each way (a binomial's standard deviation is ~16); 40-60 % allowed.
  EXPECT_GE(via_spine0, 400);
  EXPECT_LE(via_spine0, 600);
}

TEST(NetworkGraph, FatTreeCountsEqualCostPaths) {
  // A 4-ary fat tree: 4 pods of 2 edge and 2 aggregation switches, 4 cores. Edge to edge in one
  // pod: k/2 = 2 paths; across pods: (k/2)^2 = 4 paths of 4 hops.
  std::string yaml = "switches: [";
  for (int p = 0; p < 4; ++p) yaml += "e" + std::to_string(p) + "0, e" + std::to_string(p) + "1, a" + std::to_string(p) + "0, a" + std::to_string(p) + "1, ";
  yaml += "c0, c1, c2, c3]\nlinks:\n";
  for (int p = 0; p < 4; ++p) {
    for (int e = 0; e < 2; ++e) {
      for (int a = 0; a < 2; ++a) {
        yaml += "  - {between: [e" + std::to_string(p) + std::to_string(e) + ", a" + std::to_string(p) + std::to_string(a) +
                "], bandwidth: 100Gbps, latency: 1us}\n";
      }
    }
    for (int a = 0; a < 2; ++a) {
      for (int c = 0; c < 2; ++c) {
        yaml += "  - {between: [a" + std::to_string(p) + std::to_string(a) + ", c" + std::to_string(2 * a + c) +
                "], bandwidth: 100Gbps, latency: 1us}\n";
      }
    }
  }
  yaml += "attach:\n";
  for (int p = 0; p < 4; ++p) {
    for (int e = 0; e < 2; ++e) yaml += "  - {nodes: " + std::to_string(2 * p + e) + ", switch: e" + std::to_string(p) + std::to_string(e) + "}\n";
  }
  const NetworkGraph g = load(yaml, nodes_of(8, 4, 1));
  EXPECT_EQ(g.path_count(switch_index(g, "e00"), switch_index(g, "e01")), 2);
  EXPECT_EQ(g.path_count(switch_index(g, "e00"), switch_index(g, "e31")), 4);
  std::set<int> cores;
  for (std::uint64_t flow = 0; flow < 64; ++flow) {
    const NetworkGraph::Path p = g.path(switch_index(g, "e00"), switch_index(g, "e31"), flow);
    ASSERT_EQ(p.links.size(), 4u);
    cores.insert(p.switches[2]);
  }
  EXPECT_EQ(cores.size(), 4u);  // every core carries some flows
}

TEST(NetworkGraph, ParallelCablesAddUp) {
  const NetworkGraph g = load(R"(switches: [leaf0, spine0]
links:
  - {between: [leaf0, spine0], bandwidth: 400Gbps, latency: 1us, count: 2}
  - {between: [leaf0, spine0], bandwidth: 100Gbps, latency: 1us}
attach:
  - {nodes: 0-1, switch: leaf0}
  - {nodes: 2, switch: spine0}
)",
                              nodes_of(3, 8, 1));
  ASSERT_EQ(g.links().size(), 4u);
  // 2 x 400 Gbps = 800 Gbps = 100e9 B/s each way, in one link pair.
  EXPECT_EQ(g.links()[0].name, "leaf0->spine0");
  EXPECT_EQ(g.links()[1].name, "spine0->leaf0");
  EXPECT_DOUBLE_EQ(g.links()[0].bandwidth_Bps, 100e9);
  EXPECT_DOUBLE_EQ(g.links()[1].bandwidth_Bps, 100e9);
  // A second entry for the same pair is a link pair of its own, named apart.
  EXPECT_EQ(g.links()[2].name, "leaf0->spine0#1");
  EXPECT_EQ(g.links()[3].name, "spine0->leaf0#1");
  EXPECT_DOUBLE_EQ(g.links()[2].bandwidth_Bps, 12.5e9);
  EXPECT_EQ(g.path_count(0, 1), 2);
}

TEST(NetworkGraph, RailsAttachNicByNic) {
  // Two NICs per node: NIC 0 on rail0, NIC 1 on rail1; GPU g uses NIC g mod 2.
  const NetworkGraph g = load(R"(switches: [rail0, rail1, spine]
links:
  - {between: [rail0, spine], bandwidth: 400Gbps, latency: 1us}
  - {between: [rail1, spine], bandwidth: 400Gbps, latency: 1us}
attach:
  - {nodes: all, nic: 0, switch: rail0}
  - {nodes: "0-1", nic: 1, switch: rail1}
)",
                              nodes_of(2, 8, 2));
  EXPECT_EQ(g.attached(0, 0), 0);
  EXPECT_EQ(g.attached(1, 1), 1);
  EXPECT_EQ(link_names(g, g.path(0, 1, 0)), (std::vector<std::string>{"rail0->spine", "spine->rail1"}));
}

TEST(NetworkGraph, DisconnectedGraphNamesTheGpusApart) {
  EXPECT_EQ(load_error(R"(switches: [leaf0, leaf1, spine0, spine1]
links:
  - {between: [leaf0, spine0], bandwidth: 400Gbps, latency: 1us}
  - {between: [leaf1, spine1], bandwidth: 400Gbps, latency: 1us}
attach:
  - {nodes: 0-1, switch: leaf0}
  - {nodes: 2-3, switch: leaf1}
)",
                       nodes_of(4, 8, 1)),
            "{file}:3:3: error: links: GPUs 0-15 (nodes 0-1, switch leaf0) cannot reach GPUs 16-31 (nodes 2-3, switch leaf1): "
            "no path between the switches");
}

TEST(NetworkGraph, ARouteLongerThanAnyFabricIsRefused) {
  // A chain of switches with the nodes at its two ends: every flow would cross every cable (a chain
  // of 34 000 once made one simulation run for minutes). 65 hops: refused; 64: read.
  auto chain = [](int switches) {
    std::string yaml = "switches: [";
    for (int i = 0; i < switches; ++i) yaml += (i ? ", s" : "s") + std::to_string(i);
    yaml += "]\nlinks:\n";
    for (int i = 0; i + 1 < switches; ++i) {
      yaml += "  - {between: [s" + std::to_string(i) + ", s" + std::to_string(i + 1) + "], bandwidth: 400Gbps, latency: 1us}\n";
    }
    return yaml + "attach:\n  - {nodes: 0, switch: s0}\n  - {nodes: 1, switch: s" + std::to_string(switches - 1) + "}\n";
  };
  EXPECT_EQ(load_error(chain(66), nodes_of(2, 8, 1)),
            "{file}:3:3: error: links: the shortest route from switch \"s65\" to \"s0\" (both with NICs attached) takes 65 hops; "
            "hetsim routes at most 64 (the fabrics built take a few: a three-tier fat tree 4)");
  EXPECT_EQ(load_error(chain(65), nodes_of(2, 8, 1)), "(no error)");
}

TEST(NetworkGraph, TooManySwitchesIsSaidOnceNotForEveryCable) {
  // The switches over the limit are not read: every cable and attachment naming one was then said
  // to name no switch, with an empty list of the graph's switches.
  std::string yaml = "switches: [";
  for (int i = 0; i <= 65536; ++i) yaml += (i ? ", s" : "s") + std::to_string(i);
  yaml += "]\nlinks:\n  - {between: [s0, s1], bandwidth: 400Gbps, latency: 1us}\nattach:\n  - {nodes: 0, switch: s0}\n"
          "  - {nodes: 1, switch: s1}\n";
  EXPECT_EQ(load_error(yaml, nodes_of(2, 8, 1)), "{file}:1:11: error: switches: 65537 switches; a graph has at most 65536");
}

TEST(NetworkGraph, EveryProblemIsReportedWithItsPlace) {
  EXPECT_EQ(load_error(R"(switches: [leaf0, leaf1, spine0, leaf0]
links:
  - {between: [leaf0, spine9], bandwidth: 400Gbps, latency: 1us}
  - {between: [leaf1, leaf1], bandwidth: 400Gbps, latency: 1us}
  - {between: [leaf1, spine0], bandwidth: 400Gb, latency: 1us, cout: 2}
attach:
  - {nodes: 0-1, switch: leaf0}
  - {nodes: 1-7, switch: leaf1}
  - {nodes: 2-3, nic: 1, switch: leaf1}
  - {nodes: 0-3, nic: 0, switch: leaf1}
)",
                       nodes_of(4, 8, 1)),
            "{file}:1:11: error: switches: \"leaf0\" is named twice (switches[0] and switches[3])\n"
            "{file}:3:15: error: links[0].between: \"spine9\" is not a switch of this graph (switches: leaf0, leaf1, spine0, "
            "leaf0); did you mean \"spine0\"?\n"
            "{file}:4:15: error: links[1].between: a link from leaf1 to itself; a cable joins two different switches\n"
            "{file}:5:43: error: links[2].bandwidth: \"400Gb\": unknown rate unit \"Gb\"; write e.g. \"400Gbps\" (gigabits a second, as NICs are rated) or \"400GBps\" (gigabytes a second)\n"
            "{file}:5:64: error: links[2]: unknown key \"cout\"; did you mean \"count\"?\n"
            "{file}:8:13: error: attach[1].nodes: \"7\" is not a node index of this cluster: it has 4 nodes (0 to 3); write "
            "e.g. \"0-7,16\"\n"
            "{file}:9:23: error: attach[2].nic: nodes 2-3 have no NIC 1 (node 2 has 1 NIC, numbered from 0)\n"
            "{file}:10:13: error: attach[3].nodes: node 0 NIC 0 is attached twice: also by attach[0] (line 7); so is 1 more "
            "NIC of this entry");
}

TEST(NetworkGraph, UnattachedNicsAreNamedWithTheirGpus) {
  EXPECT_EQ(load_error(R"(switches: [leaf0]
attach:
  - {nodes: 0-1, nic: 0, switch: leaf0}
)",
                       nodes_of(2, 8, 2)),
            "{file}:3:3: error: attach: node 0 NIC 1 (GPUs 1,3,5,7) is attached to no switch\n"
            "{file}:3:3: error: attach: node 1 NIC 1 (GPUs 9,11,13,15) is attached to no switch");
  const std::string many = load_error("switches: [leaf0]\nattach:\n  - {nodes: 0, switch: leaf0}\n", nodes_of(8, 1, 1));
  EXPECT_NE(many.find("node 1 NIC 0 (GPU 1) is attached to no switch\n"), std::string::npos) << many;
  EXPECT_NE(many.find("{file}:3:3: error: attach: and 2 more NICs are attached to no switch"), std::string::npos) << many;
}

}  // namespace
}  // namespace hetsim
