// File: tests/fuzz/fuzz_network_graph.cpp
// Fuzz target: network graph files (topologies/network_graph.hpp load_network_graph) for a
// cluster of 4 nodes of 8 GPUs and 8 NICs, as topologies/graph-h100-4.yaml has.
#include "tests/fuzz/fuzz_input.hpp"
#include "topologies/network_graph.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::filesystem::path path = hetsim::fuzz::write_input(data, size, "graph.yaml");
  std::vector<hetsim::GraphNodeInfo> nodes;
  for (int n = 0; n < 4; ++n) nodes.push_back(hetsim::GraphNodeInfo{8, 8 * n, 8});
  hetsim::fuzz::expect_only_input_errors("load_network_graph", [&] { (void)hetsim::load_network_graph(path, nodes); });
  return 0;
}
