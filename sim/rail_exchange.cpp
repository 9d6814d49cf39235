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
  // The bytes of one edge of each phase per round, as pipelined() divides them.
  const int pieces = std::max(1, x.pieces);
  const auto m = static_cast<double>(x.nodes.size());
  const auto g = static_cast<double>(x.nodes.front().size());
  const double bytes[2] = {x.pair_bytes * m * 1 / pieces, x.pair_bytes * g * 1 / pieces};
  const std::vector<FabricLink>& links = fabric.links();
  // Pass 1: per shared link, the transfers of each phase that cross it (a route crossing a link
  // twice counts twice, as its bytes would be added twice).
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
  for (size_t l = 0; l < links.size(); ++l) {
    if (count[0][l] > 0 && count[1][l] > 0) return std::nullopt;
  }
  // A link's load: its transfers' bytes added one by one from 0, as concurrent_time adds them
  // (all equal, so their order does not matter), the links of each phase in order of their count.
  std::vector<double> load(links.size(), 0.0);
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
      load[l] = sum;
    }
  }
  // Pass 2: each transfer's latency plus its slowest link under those loads; the slowest of each phase.
  double slowest[2] = {0, 0};
  auto time = [&](int phase) {
    return [&, phase](int a, int b) {
      fabric.route(a, b, route);
      double worst = 0;
      for (int l : route.links) {
        const FabricLink& fl = links[static_cast<size_t>(l)];
        const double carried = fl.shared ? load[static_cast<size_t>(l)] : bytes[phase];
        worst = std::max(worst, carried / fl.bandwidth_Bps);
      }
      slowest[phase] = std::max(slowest[phase], 0.0 + (route.latency_s + worst));
    };
  };
  for_each_intra(x, time(0));
  for_each_inter(x, time(1));
  // The round groups of the pipeline: [0, 1) the intra phase alone, [1, pieces) both, [pieces,
  // pieces + 1) the inter phase alone (with one piece: [0, 1) intra, [1, 2) inter).
  double t = 0;
  t += 1 * slowest[0];
  if (pieces > 1) t += (pieces - 1) * std::max(slowest[0], slowest[1]);
  t += 1 * slowest[1];
  return t;
}

}  // namespace hetsim
