// File: sim/schedule.cpp
#include "sim/schedule.hpp"

#include <algorithm>
#include <map>
#include <tuple>

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
  struct Key {
    int src, dst;
    size_t edge;
  };
  std::vector<Key> order;
  order.reserve(s.edges.size());
  for (size_t i = 0; i < s.edges.size(); ++i) order.push_back({s.edges[i].src, s.edges[i].dst, i});
  std::sort(order.begin(), order.end(),
            [](const Key& a, const Key& b) { return std::tie(a.src, a.dst, a.edge) < std::tie(b.src, b.dst, b.edge); });
  std::vector<Flow> out;
  for (const Key& k : order) {
    const PipeEdge& e = s.edges[k.edge];
    if (out.empty() || out.back().src != e.src || out.back().dst != e.dst) out.push_back({e.src, e.dst, 0});
    out.back().bytes += e.chunk_bytes * e.chunks;
  }
  return out;
}

double concurrent_time(const std::vector<Flow>& flows, const Fabric& fabric) {
  // Legs of every flow (their links in one array), then the load each shared link carries. The
  // loads live in a scratch array as long as the fabric's links, zero between calls: a call costs
  // the links its flows cross, not the fabric's size (the planner asks about one flow at a time).
  std::vector<int> links;                    // every leg's links, leg after leg
  std::vector<size_t> end;                   // leg i: links [end[i-1], end[i])
  std::vector<double> latency, bytes;        // per leg
  std::vector<size_t> owner;                 // per leg: its flow
  Route r;
  const auto add_leg = [&](int src, int dst, double b, size_t f) {
    fabric.route(src, dst, r);
    links.insert(links.end(), r.links.begin(), r.links.end());
    end.push_back(links.size());
    latency.push_back(r.latency_s);
    bytes.push_back(b);
    owner.push_back(f);
  };
  for (size_t f = 0; f < flows.size(); ++f) {
    const Flow& fl = flows[f];
    if (fabric.staged(fl.src, fl.dst)) {
      const int hs = fabric.staging(fl.src), hd = fabric.staging(fl.dst);
      add_leg(fl.src, hs, fl.bytes, f);
      add_leg(hs, hd, fl.bytes, f);
      add_leg(hd, fl.dst, fl.bytes, f);
    } else {
      add_leg(fl.src, fl.dst, fl.bytes, f);
    }
  }
  const std::vector<FabricLink>& fabric_links = fabric.links();
  thread_local std::vector<double> load;  // zero everywhere between calls
  if (load.size() < fabric_links.size()) load.resize(fabric_links.size(), 0.0);
  std::vector<int> touched;
  for (size_t leg = 0, at = 0; leg < end.size(); at = end[leg++]) {
    for (size_t k = at; k < end[leg]; ++k) {
      const int link = links[k];
      if (!fabric_links[static_cast<size_t>(link)].shared) continue;
      if (load[static_cast<size_t>(link)] == 0.0) touched.push_back(link);
      load[static_cast<size_t>(link)] += bytes[leg];
    }
  }
  std::vector<double> per_flow(flows.size(), 0);
  for (size_t leg = 0, at = 0; leg < end.size(); at = end[leg++]) {
    double worst = 0;
    for (size_t k = at; k < end[leg]; ++k) {
      const FabricLink& fl = fabric_links[static_cast<size_t>(links[k])];
      const double carried = fl.shared ? load[static_cast<size_t>(links[k])] : bytes[leg];
      worst = std::max(worst, carried / fl.bandwidth_Bps);
    }
    per_flow[owner[leg]] += latency[leg] + worst;
  }
  for (int link : touched) load[static_cast<size_t>(link)] = 0.0;
  double t = 0;
  for (double x : per_flow) t = std::max(t, x);
  return t;
}

double step_estimate(const Schedule& s, const Fabric& fabric) {
  double t = s.setup_s;
  for (const RoundGroup& g : round_groups(s)) t += g.count * concurrent_time(g.flows, fabric);
  return t;
}

ScheduleEstimate estimate(const Schedule& s, const Fabric& fabric) {
  ScheduleEstimate e;
  e.step_s = step_estimate(s, fabric);
  e.phase_s = concurrent_time(merged_flows(s), fabric);
  return e;
}

}  // namespace hetsim
