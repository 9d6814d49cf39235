// File: tests/fuzz/fuzz_cluster.cpp
// Fuzz target: cluster files (topologies/cluster.hpp load_cluster).
#include "tests/fuzz/fuzz_input.hpp"
#include "topologies/cluster.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  hetsim::fuzz::link_neighbours({{"graphs", "topologies/graphs"}});  // graph-h100-4's graph, as beside the shipped file
  const std::filesystem::path path = hetsim::fuzz::write_input(data, size, "cluster.yaml");
  hetsim::fuzz::expect_only_input_errors("load_cluster", [&] { (void)hetsim::load_cluster(path); });
  return 0;
}
