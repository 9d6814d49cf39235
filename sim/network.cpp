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

void Network::leg(int src, int dst, double bytes) {
  const double start = sg4::Engine::get_clock();
  sg4::Comm::sendto(platform_.endpoint(src), platform_.endpoint(dst), amount(bytes));
  if (records_ != nullptr) records_->push_back({start, sg4::Engine::get_clock(), bytes, src, dst});
}

uint64_t Network::concurrent(const std::vector<Flow>& flows) {
  const Fabric& fabric = *platform_.fabric;
  std::vector<sg4::CommPtr> comms;
  std::vector<size_t> comm_flow;
  std::vector<sg4::ActorPtr> staged;
  uint64_t started = 0;
  const double start = sg4::Engine::get_clock();
  for (size_t i = 0; i < flows.size(); ++i) {
    const Flow& f = flows[i];
    if (f.bytes <= 0) continue;
    if (fabric.staged(f.src, f.dst)) {
      // Device-to-host copy, network, host-to-device copy, one after the other.
      staged.push_back(sg4::Actor::create("staged", platform_.gpus[f.src], [this, f, &fabric] {
        leg(f.src, fabric.staging(f.src), f.bytes);
        leg(fabric.staging(f.src), fabric.staging(f.dst), f.bytes);
        leg(fabric.staging(f.dst), f.dst, f.bytes);
      }));
      started += 3;
    } else {
      comms.push_back(sg4::Comm::sendto_async(platform_.endpoint(f.src), platform_.endpoint(f.dst), amount(f.bytes)));
      comm_flow.push_back(i);
      ++started;
    }
  }
  if (records_ == nullptr) {
    sg4::Comm::wait_all(comms);
  } else {  // completion order gives each flow its own end time
    while (!comms.empty()) {
      const ssize_t k = sg4::Comm::wait_any(comms);
      const Flow& f = flows[comm_flow[k]];
      records_->push_back({start, sg4::Engine::get_clock(), f.bytes, f.src, f.dst});
      comms.erase(comms.begin() + k);
      comm_flow.erase(comm_flow.begin() + k);
    }
  }
  for (const sg4::ActorPtr& a : staged) a->join();
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
