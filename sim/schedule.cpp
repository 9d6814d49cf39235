// File: sim/schedule.cpp
#include "sim/schedule.hpp"

#include <algorithm>
#include <map>

namespace hetsim {

int Schedule::rounds() const {
  int r = 0;
  for (const PipeEdge& e : edges) r = std::max(r, e.offset + e.chunks);
  return r;
}

std::vector<RoundGroup> round_groups(const Schedule& s) {
  // The active edge set only changes where an edge starts or stops: a sweep over those rounds,
  // keeping the bytes per round of every GPU pair with edges active (each edge added and removed
  // once, not tested in every interval: an interval holds at most the schedule's distinct pairs).
  const int rounds = s.rounds();
  std::vector<std::vector<size_t>> starts(static_cast<size_t>(rounds) + 1), stops(static_cast<size_t>(rounds) + 1);
  for (size_t i = 0; i < s.edges.size(); ++i) {
    const PipeEdge& e = s.edges[i];
    if (e.chunks <= 0) continue;
    starts[static_cast<size_t>(e.offset)].push_back(i);
    stops[static_cast<size_t>(e.offset + e.chunks)].push_back(i);
  }
  struct Active {
    double bytes = 0;
    int edges = 0;
  };
  std::map<std::pair<int, int>, Active> active;
  std::vector<RoundGroup> groups;
  int open = -1;  // the round the current active set began
  for (int r = 0; r <= rounds; ++r) {
    const size_t at = static_cast<size_t>(r);
    if (starts[at].empty() && stops[at].empty()) continue;
    if (open >= 0 && !active.empty()) {
      RoundGroup g{open, r - open, {}};
      g.flows.reserve(active.size());
      for (const auto& [pair, a] : active) g.flows.push_back({pair.first, pair.second, a.bytes});
      groups.push_back(std::move(g));
    }
    for (size_t i : stops[at]) {
      const PipeEdge& e = s.edges[i];
      const auto it = active.find({e.src, e.dst});
      if (--it->second.edges == 0) {
        active.erase(it);
      } else {
        it->second.bytes -= e.chunk_bytes;
      }
    }
    for (size_t i : starts[at]) {
      const PipeEdge& e = s.edges[i];
      Active& a = active[{e.src, e.dst}];
      a.bytes += e.chunk_bytes;
      ++a.edges;
    }
    open = r;
  }
  return groups;
}

std::vector<Flow> merged_flows(const Schedule& s) {
  // Edges by GPU pair, in schedule order within a pair (the sums as a map would add them).
  std::vector<size_t> order(s.edges.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::make_pair(s.edges[a].src, s.edges[a].dst) < std::make_pair(s.edges[b].src, s.edges[b].dst);
  });
  std::vector<Flow> out;
  for (size_t i : order) {
    const PipeEdge& e = s.edges[i];
    if (out.empty() || out.back().src != e.src || out.back().dst != e.dst) out.push_back({e.src, e.dst, 0});
    out.back().bytes += e.chunk_bytes * e.chunks;
  }
  return out;
}

double concurrent_time(const std::vector<Flow>& flows, const Fabric& fabric) {
  // Legs of every flow, then the load each shared link carries.
  struct Leg {
    Route route;
    double bytes;
    size_t flow;
  };
  std::vector<Leg> legs;
  for (size_t f = 0; f < flows.size(); ++f) {
    const Flow& fl = flows[f];
    if (fabric.staged(fl.src, fl.dst)) {
      const int hs = fabric.staging(fl.src), hd = fabric.staging(fl.dst);
      legs.push_back({fabric.route(fl.src, hs), fl.bytes, f});
      legs.push_back({fabric.route(hs, hd), fl.bytes, f});
      legs.push_back({fabric.route(hd, fl.dst), fl.bytes, f});
    } else {
      legs.push_back({fabric.route(fl.src, fl.dst), fl.bytes, f});
    }
  }
  std::vector<double> load(fabric.links().size(), 0.0);
  for (const Leg& l : legs) {
    for (int link : l.route.links) {
      if (fabric.links()[link].shared) load[link] += l.bytes;
    }
  }
  std::vector<double> per_flow(flows.size(), 0);
  for (const Leg& l : legs) {
    double worst = 0;
    for (int link : l.route.links) {
      const FabricLink& fl = fabric.links()[link];
      const double carried = fl.shared ? load[link] : l.bytes;
      worst = std::max(worst, carried / fl.bandwidth_Bps);
    }
    per_flow[l.flow] += l.route.latency_s + worst;
  }
  double t = 0;
  for (double x : per_flow) t = std::max(t, x);
  return t;
}

ScheduleEstimate estimate(const Schedule& s, const Fabric& fabric) {
  ScheduleEstimate e;
  e.step_s = s.setup_s;
  for (const RoundGroup& g : round_groups(s)) e.step_s += g.count * concurrent_time(g.flows, fabric);
  e.phase_s = concurrent_time(merged_flows(s), fabric);
  return e;
}

}  // namespace hetsim
