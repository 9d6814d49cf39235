// File: sim/rail_exchange.cpp
#include "sim/rail_exchange.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "base/parallel_for.hpp"
#include "base/progress.hpp"
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

// The inter-node transfers of one rail from one node: item `rail * nodes + node` of
// for_each_inter's order, which is these items in turn.
template <class Visit>
void for_each_inter_from(const RailExchange& x, long item, Visit&& visit) {
  const size_t m = x.nodes.size();
  const size_t r = static_cast<size_t>(item) / m;
  const auto& from = x.nodes[static_cast<size_t>(item) % m];
  for (const auto& to : x.nodes) {
    if (&from != &to) visit(from[r], to[r]);
  }
}

long inter_items(const RailExchange& x) { return static_cast<long>(x.nodes.front().size() * x.nodes.size()); }

template <class Visit>
void for_each_inter(const RailExchange& x, Visit&& visit) {
  for (long item = 0; item < inter_items(x); ++item) for_each_inter_from(x, item, visit);
}

// From this many inter-node transfers on, the estimate's two passes over them run on all cores
// (an all-to-all over 16 384 GPUs in 2048 nodes holds 33.5 million).
constexpr double kParallelTransfersFrom = 1 << 18;

bool many_inter_transfers(const RailExchange& x) {
  return static_cast<double>(inter_items(x)) * static_cast<double>(x.nodes.size() - 1) >= kParallelTransfersFrom;
}

// visit_item(item, worker) over the items of for_each_inter_from: on all cores where their
// transfers are many (each worker with its index, for results of its own; `bar` counts the items
// from `bar_from`), else in turn on worker 0. A worker should keep its scratch local to the item
// and write its results once per item: two cores writing next to each other for each transfer
// would take turns at one cache line.
template <class VisitItem>
void for_each_inter_item(const RailExchange& x, Progress& bar, size_t bar_from, VisitItem&& visit_item) {
  if (!many_inter_transfers(x)) {
    for (long item = 0; item < inter_items(x); ++item) visit_item(item, 0);
    return;
  }
  std::atomic<size_t> done{0};
  parallel_for(inter_items(x), [&](long item, int worker) {
    visit_item(item, worker);
    const size_t now = ++done;
    if (worker == 0) bar.update(bar_from + now);  // the calling thread's: the bar is not shared
  });
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
  // twice counts twice, as its bytes are added twice). The inter-node phase is counted on all
  // cores where it is large, each worker into counts of its own, added afterwards (integers: the
  // same counts in any order).
  const auto workers = static_cast<size_t>(parallel_workers());
  // Where the inter-node phase is large (an all-to-all over thousands of GPUs), a bar over its two
  // passes' items, shown when they take long (the SPMD planner's fit of an all-to-all over every GPU).
  Progress bar(many_inter_transfers(x) ? 2 * static_cast<size_t>(inter_items(x)) : 0,
               "rail groups of an all-to-all's transfers estimated", kProgressAfterS);
  // on_shared(a, b, r, f): f(link) for each shared link of a -> b's route (written into r).
  const auto on_shared = [&](int a, int b, Route& r, auto&& f) {
    fabric.route(a, b, r);
    for (int l : r.links) {
      if (links[static_cast<size_t>(l)].shared) f(static_cast<size_t>(l));
    }
  };
  std::vector<uint32_t> count[2] = {std::vector<uint32_t>(links.size(), 0), std::vector<uint32_t>(links.size(), 0)};
  std::vector<std::vector<uint32_t>> inter_count(workers);
  std::vector<char> staged(workers, 0);
  Route route;
  for_each_intra(x, [&](int a, int b) {
    if (fabric.staged(a, b)) staged[0] = 1;
    on_shared(a, b, route, [&](size_t l) { ++count[0][l]; });
  });
  for_each_inter_item(x, bar, 0, [&](long item, int worker) {
    std::vector<uint32_t>& c = inter_count[static_cast<size_t>(worker)];
    if (c.empty()) c.assign(links.size(), 0);
    Route r;
    bool item_staged = false;
    for_each_inter_from(x, item, [&](int a, int b) {
      item_staged = item_staged || fabric.staged(a, b);
      on_shared(a, b, r, [&](size_t l) { ++c[l]; });
    });
    if (item_staged) staged[static_cast<size_t>(worker)] = 1;
  });
  for (const std::vector<uint32_t>& c : inter_count) {
    for (size_t l = 0; l < c.size(); ++l) count[1][l] += c[l];
  }
  if (std::find(staged.begin(), staged.end(), 1) != staged.end()) return std::nullopt;
  // Where links carry both phases (NVLink-mesh nodes relay NIC traffic), their load while both run
  // adds bytes of each in the order that round group lists its transfers: a pass in that order.
  bool mixed = false;
  for (size_t l = 0; l < links.size() && !mixed; ++l) mixed = count[0][l] > 0 && count[1][l] > 0;
  std::vector<double> both;
  if (mixed) {
    both.assign(links.size(), 0.0);
    for_each_by_source(x, [&](int a, int b, int phase) { on_shared(a, b, route, [&](size_t l) { both[l] += bytes[phase]; }); });
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
  // Without such links both phases' loads are each phase's own. The inter-node phase runs on all
  // cores where it is large, each worker keeping its own slowest (maxima: the same in any order).
  struct Slowest {
    double alone = 0, both = 0;
    void take(const Slowest& o) {
      alone = std::max(alone, o.alone);
      both = std::max(both, o.both);
    }
  };
  auto time = [&](int phase, int a, int b, Route& r, Slowest& slowest) {
    fabric.route(a, b, r);
    double worst_alone = 0, worst_both = 0;
    for (int l : r.links) {
      const FabricLink& fl = links[static_cast<size_t>(l)];
      const auto at = static_cast<size_t>(l);
      worst_alone = std::max(worst_alone, (fl.shared ? alone[phase][at] : bytes[phase]) / fl.bandwidth_Bps);
      if (mixed) worst_both = std::max(worst_both, (fl.shared ? both[at] : bytes[phase]) / fl.bandwidth_Bps);
    }
    slowest.alone = std::max(slowest.alone, 0.0 + (r.latency_s + worst_alone));
    if (mixed) slowest.both = std::max(slowest.both, 0.0 + (r.latency_s + worst_both));
  };
  Slowest intra;
  for_each_intra(x, [&](int a, int b) { time(0, a, b, route, intra); });
  std::vector<Slowest> inter(workers);
  for_each_inter_item(x, bar, static_cast<size_t>(inter_items(x)), [&](long item, int worker) {
    Route r;
    Slowest slowest;
    for_each_inter_from(x, item, [&](int a, int b) { time(1, a, b, r, slowest); });
    inter[static_cast<size_t>(worker)].take(slowest);
  });
  Slowest all_inter;
  for (const Slowest& w : inter) all_inter.take(w);
  double slowest_alone[2] = {intra.alone, all_inter.alone}, slowest_both = std::max(intra.both, all_inter.both);
  bar.finish();
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
