// File: planner/reference_stand_in.cpp
#include "planner/reference_stand_in.hpp"

#include <cmath>

namespace hetsim {

namespace {

// `count` nodes tile groups of `group` nodes: whole groups, or a whole fraction of one.
bool tiles(int count, int group) { return group <= 0 || count % group == 0 || group % count == 0; }

}  // namespace

std::optional<ReferenceStandIn> reference_stand_in(const Cluster& homogeneous, long batch, int max_gpus) {
  if (homogeneous.node_types.size() != 1 || homogeneous.network.graph != nullptr) return std::nullopt;
  const NodeType& type = homogeneous.node_types.front();
  if (!type.degraded_nodes.empty() || type.gpus_per_node <= 0 || homogeneous.gpu_count() <= max_gpus) return std::nullopt;
  const NetworkSpec& net = homogeneous.network;
  const int leaf = net.nodes_per_leaf;
  const int pod = net.topology == NetTopology::kClos3 && leaf > 0 && net.leaves_per_pod > 0 ? leaf * net.leaves_per_pod : 0;
  int chosen = 0;
  bool chosen_divides = false;
  for (int nodes = max_gpus / type.gpus_per_node; nodes >= 1 && nodes * type.gpus_per_node * 4 >= max_gpus; --nodes) {
    if (type.count % nodes != 0 || nodes % type.nodes_per_domain() != 0 || !tiles(nodes, leaf) || !tiles(nodes, pod)) continue;
    const bool divides = batch % (type.count / nodes) == 0;
    if (chosen == 0 || (divides && !chosen_divides)) {
      chosen = nodes;
      chosen_divides = divides;
    }
    if (chosen_divides) break;
  }
  if (chosen == 0) return std::nullopt;
  ReferenceStandIn out;
  out.copies = type.count / chosen;
  out.batch = std::max<long>(1, std::lround(static_cast<double>(batch) / out.copies));
  out.cluster = homogeneous;
  out.cluster.name = homogeneous.name + " (" + std::to_string(chosen) + " nodes)";
  out.cluster.node_types.front().count = chosen;
  index_gpus(out.cluster);
  return out;
}

}  // namespace hetsim
