// File: planner/hybrid/moe_dispatch.cpp
#include "planner/hybrid/moe_dispatch.hpp"

#include <algorithm>
#include <map>

namespace hetsim {

double routing_misses(double experts, double held, long top_k) {
  double p = 1;
  for (long i = 0; i < top_k; ++i) {
    const double left = experts - held - static_cast<double>(i);
    if (left <= 0) return 0;
    p *= left / (experts - static_cast<double>(i));
  }
  return p;
}

DispatchTraffic dispatch_traffic(MoeDispatcher d, const MoeSpec& moe, double tokens, double copies, double token_bytes,
                                 EpSpan span) {
  DispatchTraffic t;
  const int ep = std::max(1, span.ep);
  if (ep <= 1) return t;
  const double imbalance = moe.router_imbalance;
  switch (d) {
    case MoeDispatcher::kAllToAll:
      t.all_to_all = copies * token_bytes * imbalance;
      break;
    case MoeDispatcher::kAllGather:
      t.all_gather = tokens * token_bytes * ep;
      break;
    case MoeDispatcher::kFlex: {
      const int nodes = std::clamp(span.nodes, 1, ep);
      const double per_node = static_cast<double>(ep) / nodes, experts = static_cast<double>(moe.experts);
      const double sent = tokens * token_bytes * imbalance;
      // Sizes are whole buffers: a group of n keeps 1/n of it, so (n - 1)/n of size = the copies sent.
      if (nodes > 1) t.rail_all_to_all = sent * nodes * (1 - routing_misses(experts, experts / nodes, moe.top_k));
      if (per_node > 1) t.all_to_all = sent * nodes * per_node * (1 - routing_misses(experts, experts / ep, moe.top_k));
      break;
    }
  }
  return t;
}

int ep_nodes(int ep, int expert_tp, int gpus_per_domain) {
  const int span = std::max(1, ep) * std::max(1, expert_tp);
  return gpus_per_domain > 0 && span > gpus_per_domain ? (span + gpus_per_domain - 1) / gpus_per_domain : 1;
}

FlexGroups flex_groups(const std::vector<int>& ep_group, const Cluster& cluster) {
  std::map<int, std::vector<int>> by_node;
  for (int d : ep_group) by_node[cluster.gpus[d].domain].push_back(d);
  FlexGroups g;
  size_t rails = SIZE_MAX;
  for (auto& [node, members] : by_node) {
    std::sort(members.begin(), members.end());
    rails = std::min(rails, members.size());
    g.nodes.push_back(members);
  }
  if (g.nodes.size() < 2) return g;
  for (size_t k = 0; k < rails; ++k) {
    std::vector<int> rail;
    for (const std::vector<int>& members : g.nodes) rail.push_back(members[k]);
    g.rails.push_back(std::move(rail));
  }
  return g;
}

}  // namespace hetsim
