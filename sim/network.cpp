// File: sim/network.cpp
#include "sim/network.hpp"

#include <simgrid/s4u.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>

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

// What one endpoint actor does in a mailbox exchange: send these, receive that many.
struct PortJob {
  int endpoint = 0;
  std::vector<std::pair<int, double>> puts;  // (destination endpoint, bytes)
  int gets = 0;
};

namespace {

// The jobs of direct transfers: per endpoint its sends and receives, cut into jobs of at most
// `most` transfers (each job's actor keeps a list of its transfers that every completion searches).
std::vector<PortJob> port_jobs(const std::vector<Flow>& transfers, size_t most) {
  std::map<int, PortJob> by_endpoint;  // ordered: actors start in a fixed order
  for (const Flow& f : transfers) {
    by_endpoint[f.src].puts.emplace_back(f.dst, f.bytes);
    ++by_endpoint[f.dst].gets;
  }
  std::vector<PortJob> jobs;
  for (auto& [endpoint, all] : by_endpoint) {
    size_t put = 0;
    int gets = all.gets;
    while (put < all.puts.size() || gets > 0) {
      PortJob j;
      j.endpoint = endpoint;
      const size_t n = std::min(most, all.puts.size() - put);
      j.puts.assign(all.puts.begin() + static_cast<std::ptrdiff_t>(put), all.puts.begin() + static_cast<std::ptrdiff_t>(put + n));
      put += n;
      j.gets = static_cast<int>(std::min<size_t>(most - n, static_cast<size_t>(gets)));
      gets -= j.gets;
      jobs.push_back(std::move(j));
    }
  }
  return jobs;
}

}  // namespace

size_t Network::default_actor_budget() {
  static const size_t most = [] {
    long limit = 0;
    std::ifstream in("/proc/sys/vm/max_map_count");
    constexpr long kLeft = 16384;
    return in >> limit && limit > 2 * kLeft ? static_cast<size_t>((limit - kLeft) / 2) : size_t{8192};
  }();
  return most;
}

bool Network::through_ports(const std::vector<Legs>& legs, std::vector<PortJob>& jobs, std::vector<Legs>& rest) const {
  if (records_ != nullptr || legs.size() <= kFlowsPerActor) return false;
  std::vector<Flow> transfers;
  for (const Legs& l : legs) {
    if (l.count != 1 || l.legs[0].first == l.legs[0].second) return false;
    transfers.push_back({l.legs[0].first, l.legs[0].second, l.bytes});
  }
  jobs = port_jobs(transfers, kFlowsPerActor);
  if (jobs.size() > actors_free()) {
    // As many endpoints as the budget holds (jobs are ordered by endpoint), counting all their
    // transfers: an upper bound of the jobs they need for the transfers among themselves.
    std::vector<char> chosen(platform_.fabric->endpoint_count(), 0);
    size_t taken = 0;
    for (size_t j = 0; j < jobs.size();) {
      size_t k = j;
      while (k < jobs.size() && jobs[k].endpoint == jobs[j].endpoint) ++k;
      if (taken + (k - j) > actors_free()) break;
      taken += k - j;
      chosen[jobs[j].endpoint] = 1;
      j = k;
    }
    std::vector<Flow> within;
    for (size_t i = 0; i < legs.size(); ++i) {
      if (chosen[transfers[i].src] && chosen[transfers[i].dst]) {
        within.push_back(transfers[i]);
      } else {
        rest.push_back(legs[i]);
      }
    }
    transfers.swap(within);
    jobs = port_jobs(transfers, kFlowsPerActor);
  }
  // Starting an actor costs more than a short list search: worth it where actors carry many
  // transfers each (an all-to-all) or the flows are so many that the list dominates (measured on
  // rings: even at 16 384 flows, 2.6x faster at 32 768).
  const bool worth = !jobs.empty() && (transfers.size() >= kPortsFromFlows || transfers.size() >= 16 * jobs.size());
  if (!worth) rest.clear();
  return worth;
}

void Network::run_through_ports(const std::vector<PortJob>& jobs, const std::vector<Legs>& rest) {
  int call = next_call_;
  if (free_calls_.empty()) {
    ++next_call_;
  } else {
    call = free_calls_.back();
    free_calls_.pop_back();
  }
  // A mailbox per (call, receiving endpoint): which of its senders a receive meets does not
  // matter, the transfer runs between the sender's and the receiver's hosts with the sender's bytes.
  auto mailbox = [call](int endpoint) {
    char name[32];
    std::snprintf(name, sizeof name, "c%d>%d", call, endpoint);
    return sg4::Mailbox::by_name(name);
  };
  live_actors_ += jobs.size();
  std::vector<sg4::ActorPtr> actors;
  for (const PortJob& job : jobs) {
    actors.push_back(sg4::Actor::create("port", platform_.endpoint(job.endpoint), [&mailbox, &job] {
      static char payload;
      std::vector<sg4::CommPtr> comms;
      std::vector<void*> received(static_cast<size_t>(job.gets));
      for (const auto& [dst, bytes] : job.puts) comms.push_back(mailbox(dst)->put_async(&payload, amount(bytes)));
      sg4::Mailbox* mine = mailbox(job.endpoint);
      for (void*& r : received) comms.push_back(mine->get_async<void>(&r));
      sg4::Comm::wait_all(comms);
    }));
  }
  run_batch(rest, 0, rest.size());  // starts at the same moment: no simulated time passes before
  for (const sg4::ActorPtr& a : actors) a->join();
  live_actors_ -= jobs.size();
  free_calls_.push_back(call);
}

uint64_t Network::concurrent(const std::vector<Flow>& flows) {
  const std::vector<Legs> legs = legs_of(flows);
  uint64_t started = 0;
  for (const Legs& l : legs) started += static_cast<uint64_t>(l.count);
  if (legs.size() <= kFlowsPerActor) {
    run_batch(legs, 0, legs.size());
    return started;
  }
  // SimGrid 3.32 keeps every host-to-host transfer (Comm::sendto) in one engine-wide list that each
  // completion searches end to end: F concurrent flows cost O(F^2) (90 % of a 512-GPU plan, whose
  // all-to-all starts 261 632 flows). Transfers between actors sit only in their two actors' lists:
  // flows run as mailbox transfers between actors on their endpoints, each actor sending or
  // receiving at most kFlowsPerActor (the same flows, hosts and bytes: the same times), for as
  // many endpoints as the actor budget holds.
  std::vector<PortJob> jobs;
  if (std::vector<Legs> rest; through_ports(legs, jobs, rest)) {
    run_through_ports(jobs, rest);
    return started;
  }
  // Otherwise batches of kFlowsPerActor flows, each started and awaited by an actor of its own,
  // keep each actor's list short, and a staged transfer's legs run in its batch's actor, not one
  // of its own (a 512-GPU A100 + MI250X run once ran out of actor stacks).
  const size_t batches = (legs.size() + kFlowsPerActor - 1) / kFlowsPerActor;
  if (batches - 1 > actors_free()) {
    run_batch(legs, 0, legs.size());
    return started;
  }
  live_actors_ += batches - 1;
  std::vector<sg4::ActorPtr> helpers;
  for (size_t first = kFlowsPerActor; first < legs.size(); first += kFlowsPerActor) {
    const size_t last = std::min(legs.size(), first + kFlowsPerActor);
    const int src = legs[first].legs[0].first;
    helpers.push_back(sg4::Actor::create("flows", platform_.endpoint(src), [this, &legs, first, last] { run_batch(legs, first, last); }));
  }
  run_batch(legs, 0, kFlowsPerActor);
  for (const sg4::ActorPtr& a : helpers) a->join();
  live_actors_ -= batches - 1;
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
