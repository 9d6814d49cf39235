// File: tests/bench/bench_inputs.hpp
// Inputs the benchmarks share: shipped files by name, shipped clusters scaled to a node count.
#pragma once

#include <filesystem>
#include <string>

#include "topologies/cluster.hpp"

namespace hetsim::bench {

inline std::filesystem::path shipped(const std::string& folder, const std::string& name) {
  return std::filesystem::path(HETSIM_TEST_SOURCE_DIR) / folder / (name + ".yaml");
}

// A shipped cluster with `nodes` nodes of every node type.
inline Cluster scaled(const std::string& name, int nodes) {
  Cluster c = load_cluster(shipped("topologies", name));
  for (NodeType& nt : c.node_types) nt.count = nodes;
  index_gpus(c);
  return c;
}

}  // namespace hetsim::bench
