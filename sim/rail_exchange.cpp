// File: sim/rail_exchange.cpp
#include "sim/rail_exchange.hpp"

#include <algorithm>
#include <cstdint>

#include "sim/channel_schedules.hpp"

namespace hetsim {

namespace {

// Each member's pair share for the other members of its node (the intra-node phase), and the
// rail transfers between nodes (the inter-node phase), as the edges of each phase would be listed.
template <class Visit>
void for_each_intra(const RailExchange& x, Visit&& visit) {
  for (const auto& node : x.nodes) {
    for (int a : node) {
      for (int b : node) {
        if (a != b) visit(a, b);
      }
    }
  }
}

template <class Visit>
void for_each_inter(const RailExchange& x, Visit&& visit) {
  for (size_t r = 0; r < x.nodes.front().size(); ++r) {
    for (const auto& from : x.nodes) {
      for (const auto& to : x.nodes) {
        if (&from != &to) visit(from[r], to[r]);
      }
    }
  }
}

// Every transfer of both phases by source GPU, then destination GPU (`visit(src, dst, phase)`):
// the order of the round group where both phases run, in which concurrent_time adds their bytes
// onto each link. A source's destinations are its node's members and its rail's members but
// itself, merged.
template <class Visit>
void for_each_by_source(const RailExchange& x, Visit&& visit) {
  struct Member {
    int node, rail;
  };
  std::vector<std::pair<int, Member>> sources;
  for (size_t a = 0; a < x.nodes.size(); ++a) {
    for (size_t r = 0; r < x.nodes[a].size(); ++r) sources.push_back({x.nodes[a][r], {static_cast<int>(a), static_cast<int>(r)}});
  }
  std::sort(sources.begin(), sources.end(), [](const auto& p, const auto& q) { return p.first < q.first; });
  auto sorted = [](std::vector<int> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  std::vector<std::vector<int>> node_members, rail_members(x.nodes.front().size());
  for (const auto& node : x.nodes) {
    node_members.push_back(sorted(node));
    for (size_t r = 0; r < node.size(); ++r) rail_members[r].push_back(node[r]);
  }
  for (auto& rail : rail_members) rail = sorted(std::move(rail));
  for (const auto& [src, at] : sources) {
    const std::vector<int>& inside = node_members[static_cast<size_t>(at.node)];
    const std::vector<int>& across = rail_members[static_cast<size_t>(at.rail)];
    size_t i = 0, j = 0;
    while (i < inside.size() || j < across.size()) {
      if (i < inside.size() && inside[i] == src) {
        ++i;
      } else if (j < across.size() && across[j] == src) {
        ++j;
      } else if (j == across.size() || (i < inside.size() && inside[i] < across[j])) {
        visit(src, inside[i++], 0);
      } else {
        visit(src, across[j++], 1);
      }
    }
  }
}

}  // namespace

Schedule expanded(const RailExchange& x) {
  const auto m = static_cast<double>(x.nodes.size());
  const auto g = static_cast<double>(x.nodes.front().size());
  Schedule intra, inter;
  for_each_intra(x, [&](int a, int b) { intra.edges.push_back({a, b, 0, 1, x.pair_bytes * m}); });
  for_each_inter(x, [&](int a, int b) { inter.edges.push_back({a, b, 0, 1, x.pair_bytes * g}); });
  return pipelined({intra, inter}, x.pieces);
}

std::optional<double> rail_exchange_step_estimate(const RailExchange& x, const Fabric& fabric) {
  if (x.nodes.size() < 2 || x.nodes.front().size() < 2) return std::nullopt;  // a phase without edges
  for (const auto& node : x.nodes) {
    if (node.size() != x.nodes.front().size()) return std::nullopt;  // not rails (PXN never makes one)
  }
  // The bytes of one edge of each phase per round, as pipelined() divides them.
  const int pieces = std::max(1, x.pieces);
  const auto m = static_cast<double>(x.nodes.size());
  const auto g = static_cast<double>(x.nodes.front().size());
  const double bytes[2] = {x.pair_bytes * m * 1 / pieces, x.pair_bytes * g * 1 / pieces};
  const std::vector<FabricLink>& links = fabric.links();
  // Pass 1: per shared link, the transfers of each phase that cross it (a route crossing a link
  // twice counts twice, as its bytes are added twice).
  std::vector<uint32_t> count[2] = {std::vector<uint32_t>(links.size(), 0), std::vector<uint32_t>(links.size(), 0)};
  Route route;
  bool staged = false;
  auto tally = [&](int phase) {
    return [&, phase](int a, int b) {
      if (fabric.staged(a, b)) staged = true;
      fabric.route(a, b, route);
      for (int l : route.links) {
        if (links[static_cast<size_t>(l)].shared) ++count[phase][static_cast<size_t>(l)];
      }
    };
  };
  for_each_intra(x, tally(0));
  for_each_inter(x, tally(1));
  if (staged) return std::nullopt;
  // Where links carry both phases (NVLink-mesh nodes relay NIC traffic), their load while both run
  // adds bytes of each in the order that round group lists its transfers: a pass in that order.
  bool mixed = false;
  for (size_t l = 0; l < links.size() && !mixed; ++l) mixed = count[0][l] > 0 && count[1][l] > 0;
  std::vector<double> both;
  if (mixed) {
    both.assign(links.size(), 0.0);
    for_each_by_source(x, [&](int a, int b, int phase) {
      fabric.route(a, b, route);
      for (int l : route.links) {
        if (links[static_cast<size_t>(l)].shared) both[static_cast<size_t>(l)] += bytes[phase];
      }
    });
  }
  // The load of one phase running alone: its transfers' bytes, all equal, added one by one from 0
  // (their order does not matter), the links in order of their count.
  std::vector<double> alone[2] = {std::vector<double>(links.size(), 0.0), std::vector<double>(links.size(), 0.0)};
  for (int phase = 0; phase < 2; ++phase) {
    std::vector<std::pair<uint32_t, size_t>> by_count;
    for (size_t l = 0; l < links.size(); ++l) {
      if (count[phase][l] > 0) by_count.emplace_back(count[phase][l], l);
    }
    std::sort(by_count.begin(), by_count.end());
    double sum = 0;
    uint32_t added = 0;
    for (const auto& [k, l] : by_count) {
      for (; added < k; ++added) sum += bytes[phase];
      alone[phase][l] = sum;
    }
  }
  // Pass 2: each transfer's latency plus its slowest link, under its phase's loads alone and (where
  // links carry both phases) under both phases' loads; the slowest transfer of each round group.
  // Without such links both phases' loads are each phase's own.
  double slowest_alone[2] = {0, 0}, slowest_both = 0;
  auto time = [&](int phase) {
    return [&, phase](int a, int b) {
      fabric.route(a, b, route);
      double worst_alone = 0, worst_both = 0;
      for (int l : route.links) {
        const FabricLink& fl = links[static_cast<size_t>(l)];
        const auto at = static_cast<size_t>(l);
        worst_alone = std::max(worst_alone, (fl.shared ? alone[phase][at] : bytes[phase]) / fl.bandwidth_Bps);
        if (mixed) worst_both = std::max(worst_both, (fl.shared ? both[at] : bytes[phase]) / fl.bandwidth_Bps);
      }
      slowest_alone[phase] = std::max(slowest_alone[phase], 0.0 + (route.latency_s + worst_alone));
      if (mixed) slowest_both = std::max(slowest_both, 0.0 + (route.latency_s + worst_both));
    };
  };
  for_each_intra(x, time(0));
  for_each_inter(x, time(1));
  if (!mixed) slowest_both = std::max(slowest_alone[0], slowest_alone[1]);
  // The round groups of the pipeline: [0, 1) the intra phase alone, [1, pieces) both, [pieces,
  // pieces + 1) the inter phase alone (with one piece: [0, 1) intra, [1, 2) inter).
  double t = 0;
  t += 1 * slowest_alone[0];
  if (pieces > 1) t += (pieces - 1) * slowest_both;
  t += 1 * slowest_alone[1];
  return t;
}

}  // namespace hetsim
