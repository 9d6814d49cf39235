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

namespace {

std::vector<Flow> merge(std::map<std::pair<int, int>, double>& bytes) {
  std::vector<Flow> out;
  out.reserve(bytes.size());
  for (const auto& [pair, b] : bytes) out.push_back({pair.first, pair.second, b});
  return out;
}

}  // namespace

std::vector<RoundGroup> round_groups(const Schedule& s) {
  // The active edge set only changes where an edge starts or stops.
  std::vector<int> cuts;
  for (const PipeEdge& e : s.edges) {
    cuts.push_back(e.offset);
    cuts.push_back(e.offset + e.chunks);
  }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  std::vector<RoundGroup> groups;
  for (size_t i = 0; i + 1 < cuts.size(); ++i) {
    std::map<std::pair<int, int>, double> bytes;
    for (const PipeEdge& e : s.edges) {
      if (e.offset <= cuts[i] && cuts[i] < e.offset + e.chunks) bytes[{e.src, e.dst}] += e.chunk_bytes;
    }
    if (!bytes.empty()) groups.push_back({cuts[i], cuts[i + 1] - cuts[i], merge(bytes)});
  }
  return groups;
}

std::vector<Flow> merged_flows(const Schedule& s) {
  std::map<std::pair<int, int>, double> bytes;
  for (const PipeEdge& e : s.edges) bytes[{e.src, e.dst}] += e.chunk_bytes * e.chunks;
  return merge(bytes);
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
