// File: sim/network.cpp
#include "sim/network.hpp"

#include <simgrid/s4u.hpp>

#include <algorithm>
#include <cmath>

namespace hetsim {

namespace sg4 = simgrid::s4u;

std::string_view fidelity_name(Fidelity f) { return f == Fidelity::kStep ? "step" : "phase"; }

namespace {
uint64_t amount(double bytes) { return static_cast<uint64_t>(std::llround(bytes)); }
}  // namespace

std::vector<Network::Legs> Network::legs_of(const std::vector<Flow>& flows) const {
  const Fabric& fabric = *platform_.fabric;
  std::vector<Legs> out;
  for (const Flow& f : flows) {
    if (f.bytes <= 0) continue;
    if (fabric.staged(f.src, f.dst)) {  // device-to-host copy, network, host-to-device copy, one after the other
      Legs l;
      l.legs = {{{f.src, fabric.staging(f.src)}, {fabric.staging(f.src), fabric.staging(f.dst)}, {fabric.staging(f.dst), f.dst}}};
      l.count = 3;
      l.bytes = f.bytes;
      out.push_back(l);
    } else {
      Legs l;
      l.legs[0] = {f.src, f.dst};
      l.bytes = f.bytes;
      out.push_back(l);
    }
  }
  return out;
}

void Network::run_batch(const std::vector<Legs>& flows, size_t first, size_t last) {
  bool direct = records_ == nullptr;
  for (size_t i = first; i < last && direct; ++i) direct = flows[i].count == 1;
  if (direct) {  // the common case: start all, wait for all
    std::vector<sg4::CommPtr> comms;
    comms.reserve(last - first);
    for (size_t i = first; i < last; ++i) {
      const auto [src, dst] = flows[i].legs[0];
      comms.push_back(sg4::Comm::sendto_async(platform_.endpoint(src), platform_.endpoint(dst), amount(flows[i].bytes)));
    }
    sg4::Comm::wait_all(comms);
    return;
  }
  // Each flow's legs one after the other, all flows at once: the next leg of a flow starts when
  // its previous one ends (and is recorded with its own start and end).
  std::vector<sg4::CommPtr> comms;
  std::vector<size_t> flow_of;
  std::vector<int> next(last - first, 0);
  std::vector<double> began;
  auto start_leg = [&](size_t i) {
    const auto [src, dst] = flows[i].legs[next[i - first]];
    comms.push_back(sg4::Comm::sendto_async(platform_.endpoint(src), platform_.endpoint(dst), amount(flows[i].bytes)));
    flow_of.push_back(i);
    began.push_back(sg4::Engine::get_clock());
  };
  for (size_t i = first; i < last; ++i) start_leg(i);
  while (!comms.empty()) {
    const auto k = static_cast<size_t>(sg4::Comm::wait_any(comms));
    const size_t i = flow_of[k];
    if (records_ != nullptr) {
      const auto [src, dst] = flows[i].legs[next[i - first]];
      records_->push_back({began[k], sg4::Engine::get_clock(), flows[i].bytes, src, dst});
    }
    comms.erase(comms.begin() + static_cast<std::ptrdiff_t>(k));
    flow_of.erase(flow_of.begin() + static_cast<std::ptrdiff_t>(k));
    began.erase(began.begin() + static_cast<std::ptrdiff_t>(k));
    if (++next[i - first] < flows[i].count) start_leg(i);
  }
}

uint64_t Network::concurrent(const std::vector<Flow>& flows) {
  const std::vector<Legs> legs = legs_of(flows);
  uint64_t started = 0;
  for (const Legs& l : legs) started += static_cast<uint64_t>(l.count);
  if (legs.size() <= kFlowsPerActor) {
    run_batch(legs, 0, legs.size());
    return started;
  }
  // SimGrid 3.32 keeps an actor's activities in a list that each completion it waits for searches
  // end to end: batches of kFlowsPerActor flows, each started and awaited by an actor of its own,
  // keep those lists short, and a staged transfer's legs run in its batch's actor, not one of its
  // own (a 512-GPU A100 + MI250X run once ran out of actor stacks). Host-to-host transfers also
  // sit in one engine-wide list until they end, which no batching shortens (README, "At thousands of GPUs").
  std::vector<sg4::ActorPtr> helpers;
  for (size_t first = kFlowsPerActor; first < legs.size(); first += kFlowsPerActor) {
    const size_t last = std::min(legs.size(), first + kFlowsPerActor);
    const int src = legs[first].legs[0].first;
    helpers.push_back(sg4::Actor::create("flows", platform_.endpoint(src), [this, &legs, first, last] { run_batch(legs, first, last); }));
  }
  run_batch(legs, 0, kFlowsPerActor);
  for (const sg4::ActorPtr& a : helpers) a->join();
  return started;
}

PreparedSchedule Network::prepare(const Schedule& schedule, Fidelity fidelity) const {
  PreparedSchedule p;
  p.fidelity = fidelity;
  if (fidelity == Fidelity::kStep) {
    p.rounds = round_groups(schedule);
    p.setup_s = schedule.setup_s;
    return p;
  }
  p.flows = merged_flows(schedule);
  const ScheduleEstimate e = estimate(schedule, *platform_.fabric);
  p.extra_s = std::max(0.0, e.step_s - e.phase_s);
  return p;
}

uint64_t Network::run(const PreparedSchedule& p) {
  uint64_t started = 0;
  if (p.fidelity == Fidelity::kStep) {
    if (p.setup_s > 0) {
      sg4::this_actor::sleep_for(p.setup_s);
      ++started;
    }
    for (const RoundGroup& g : p.rounds) {
      for (int r = 0; r < g.count; ++r) started += concurrent(g.flows);
    }
    return started;
  }
  started += concurrent(p.flows);
  if (p.extra_s > 0) {
    sg4::this_actor::sleep_for(p.extra_s);
    ++started;
  }
  return started;
}

}  // namespace hetsim
