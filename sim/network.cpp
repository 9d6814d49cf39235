// File: sim/network.cpp
#include "sim/network.hpp"

#include <simgrid/s4u.hpp>
#include <sys/resource.h>
#include <unistd.h>
#include <xbt/config.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <optional>

namespace hetsim {

namespace sg4 = simgrid::s4u;

std::string_view fidelity_name(Fidelity f) { return f == Fidelity::kStep ? "step" : "phase"; }

namespace {
// Whole bytes, at least one: a flow (bytes > 0) of less than half a byte (a 4-byte all-to-all over
// 16 GPUs sends each peer a quarter) would round to an empty transfer, which SimGrid 3.32 does not
// time as one (it took 0.4 ms) and, staged through host memory, never completed (a deadlock).
uint64_t amount(double bytes) { return std::max<uint64_t>(1, static_cast<uint64_t>(std::llround(bytes))); }

// Runs flows[first, last) to their ends from the calling actor, all flows at once and each flow's
// legs one after another (a staged flow's next leg starts when its previous one ends):
// start(src, dst, bytes) starts a leg and returns its transfer; each leg that arrives is recorded
// with its own start and end (where `records` is set) and told to arrived(). Where every flow has
// one leg and `one_by_one` is false, one wait for all.
template <class Start, class Arrived>
void run_legs(const std::vector<FlowLegs>& flows, size_t first, size_t last, std::vector<FlowRecord>* records, bool one_by_one,
              Start&& start, Arrived&& arrived) {
  std::vector<sg4::CommPtr> comms;
  std::vector<size_t> flow_of;  // comms[k] carries a leg of flows[flow_of[k]]
  std::vector<double> began;    // when it started
  std::vector<int> next(last - first, 0);
  comms.reserve(last - first);
  bool staged = false;
  auto start_leg = [&](size_t i) {
    const auto [src, dst] = flows[i].legs[next[i - first]];
    comms.push_back(start(src, dst, amount(flows[i].bytes)));
    flow_of.push_back(i);
    began.push_back(sg4::Engine::get_clock());
  };
  for (size_t i = first; i < last; ++i) {
    start_leg(i);
    staged = staged || flows[i].count > 1;
  }
  if (!staged && !one_by_one && records == nullptr) {  // the common case: start all, wait for all
    sg4::Comm::wait_all(comms);
    for (size_t k = 0; k < comms.size(); ++k) arrived();
    return;
  }
  while (!comms.empty()) {
    const auto k = static_cast<size_t>(sg4::Comm::wait_any(comms));
    const size_t i = flow_of[k];
    if (records != nullptr) {
      const auto [src, dst] = flows[i].legs[next[i - first]];
      records->push_back({began[k], sg4::Engine::get_clock(), flows[i].bytes, src, dst});
    }
    comms.erase(comms.begin() + static_cast<std::ptrdiff_t>(k));
    flow_of.erase(flow_of.begin() + static_cast<std::ptrdiff_t>(k));
    began.erase(began.begin() + static_cast<std::ptrdiff_t>(k));
    if (++next[i - first] < flows[i].count) start_leg(i);
    arrived();
  }
}
}  // namespace

FlowLegs legs_of(const Fabric& fabric, const Flow& f) {
  FlowLegs l;
  l.bytes = f.bytes;
  if (fabric.staged(f.src, f.dst)) {
    l.legs = {{{f.src, fabric.staging(f.src)}, {fabric.staging(f.src), fabric.staging(f.dst)}, {fabric.staging(f.dst), f.dst}}};
    l.count = 3;
  } else {
    l.legs[0] = {f.src, f.dst};
  }
  return l;
}

std::vector<Network::Legs> Network::legs_of(const std::vector<Flow>& flows) const {
  std::vector<Legs> out;
  for (const Flow& f : flows) {
    if (f.bytes > 0) out.push_back(hetsim::legs_of(*platform_.fabric, f));
  }
  return out;
}

void Network::run_batch(const std::vector<Legs>& flows, size_t first, size_t last, std::vector<FlowRecord>* records) {
  run_legs(
      flows, first, last, records, false,
      [&](int src, int dst, uint64_t bytes) {
        ++live_direct_;
        return sg4::Comm::sendto_async(platform_.endpoint(src), platform_.endpoint(dst), bytes);
      },
      [&] { --live_direct_; });
}

size_t Network::default_actor_budget() {
  static const size_t most = [] {
    long limit = 0;
    std::ifstream in("/proc/sys/vm/max_map_count");
    constexpr long kLeft = 16384;
    return in >> limit && limit > 2 * kLeft ? static_cast<size_t>((limit - kLeft) / 2) : size_t{8192};
  }();
  return std::min(most, stacks_that_fit());  // (the address space left changes from run to run)
}

size_t Network::stack_bytes() {
  const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  return static_cast<size_t>(simgrid::config::get_value<int>("contexts/stack-size")) * 1024 +
         static_cast<size_t>(simgrid::config::get_value<int>("contexts/guard-size")) * page;
}

size_t Network::address_space_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return 0;
  return static_cast<size_t>(limit.rlim_cur);
}

size_t Network::stacks_that_fit() {
  const size_t cap = address_space_limit();
  if (cap == 0) return SIZE_MAX;
  size_t pages = 0;  // the address space mapped now (/proc/self/statm: size in pages first)
  std::ifstream statm("/proc/self/statm");
  statm >> pages;
  const size_t used = pages * static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  return cap > used ? (cap - used) / 2 / stack_bytes() : 0;
}

size_t Network::relay_pairs(size_t transfers) const {
  // The engine-wide list holds every host-to-host transfer in flight, from every collective:
  // what counts is all of them, not this set alone (a pipeline of MoE stages runs dozens of
  // all-to-alls of a few hundred flows each at once).
  if (transfers + live_direct_ < relays_from_) return 0;
  const size_t free_pairs = idle_relays_.size() + actors_free() / 2;
  const size_t wanted = (transfers + kFlowsPerRelay - 1) / kFlowsPerRelay;
  return std::min(wanted, free_pairs);
}

// A relay pair: its receiver posts one receive per transfer of its job on the pair's mailbox, then
// its sender, for each transfer, moves itself to the source host and the receiver to the
// destination host and sends. SimGrid starts a mailbox transfer between the hosts its two actors
// are on when it is matched, which happens in the send: the transfer runs between the right hosts
// from the same moment (no simulated time passes). Between jobs both wait on their semaphores.
struct Network::RelayPair {
  sg4::Mailbox* box = nullptr;
  sg4::SemaphorePtr receive = sg4::Semaphore::create(0);  // a job for the receiver
  sg4::SemaphorePtr send = sg4::Semaphore::create(0);     // the same job for the sender
  sg4::SemaphorePtr posted = sg4::Semaphore::create(0);   // the receiver has posted its receives
  sg4::SemaphorePtr done = sg4::Semaphore::create(0);     // every transfer of the job has arrived
  const std::vector<Legs>* flows = nullptr;               // the job: flows[first, last), legs in turn
  size_t first = 0, last = 0;
  TransferBar* bar = nullptr;                             // its set's bar, counted as legs arrive
  std::vector<FlowRecord>* records = nullptr;             // where its legs are recorded (null: not)
  sg4::ActorPtr in;
};

Network::Network(const Platform& platform, std::vector<FlowRecord>* records) : platform_(platform), records_(records) {}

Network::~Network() = default;

Network::RelayPair& Network::idle_relay(int src, int dst) {
  if (!idle_relays_.empty()) {
    RelayPair* r = idle_relays_.back();
    idle_relays_.pop_back();
    return *r;
  }
  relays_.push_back(std::make_unique<RelayPair>());
  RelayPair* r = relays_.back().get();
  live_actors_ += 2;
  char name[32];
  std::snprintf(name, sizeof name, "relay%zu", relays_.size() - 1);
  r->box = sg4::Mailbox::by_name(name);
  r->in = sg4::Actor::create("relay-in", platform_.endpoint(dst), [r] {
    while (true) {
      r->receive->acquire();
      size_t legs = 0;  // one receive per leg: a staged flow's three legs arrive one after another
      for (size_t i = r->first; i < r->last; ++i) legs += static_cast<size_t>((*r->flows)[i].count);
      std::vector<void*> received(legs);
      std::vector<sg4::CommPtr> comms;
      comms.reserve(received.size());
      for (void*& got : received) comms.push_back(r->box->get_async<void>(&got));
      r->posted->release();
      sg4::Comm::wait_all(comms);
    }
  });
  r->in->daemonize();
  sg4::Actor::create("relay-out", platform_.endpoint(src), [this, r] {
    static char payload;
    while (true) {
      r->send->acquire();
      r->posted->acquire();
      TransferBar* bar = r->bar;
      run_legs(
          *r->flows, r->first, r->last, r->records, bar != nullptr,
          [&](int from_gpu, int to_gpu, uint64_t bytes) {
            sg4::Host* from = platform_.endpoint(from_gpu);
            sg4::Host* to = platform_.endpoint(to_gpu);
            if (sg4::this_actor::get_host() != from) sg4::this_actor::set_host(from);
            if (r->in->get_host() != to) r->in->set_host(to);
            return r->box->put_async(&payload, bytes);
          },
          [&] {
            if (bar != nullptr) bar->bar.update(++bar->arrived);
          });
      r->done->release();
    }
  })->daemonize();
  return *r;
}

void Network::run_relays(const std::vector<Legs>& flows, size_t pairs, TransferBar* bar, std::vector<FlowRecord>* records) {
  // Pair k carries transfers [k * per, (k + 1) * per).
  const size_t per = (flows.size() + pairs - 1) / pairs;
  std::vector<RelayPair*> used;
  for (size_t first = 0; first < flows.size(); first += per) {
    RelayPair& r = idle_relay(flows[first].legs[0].first, flows[first].legs[0].second);
    r.flows = &flows;
    r.first = first;
    r.last = std::min(flows.size(), first + per);
    r.bar = bar;
    r.records = records;
    r.receive->release();
    r.send->release();
    used.push_back(&r);
  }
  for (RelayPair* r : used) {
    r->done->acquire();
    idle_relays_.push_back(r);
  }
}

uint64_t Network::concurrent(const std::vector<Flow>& flows, std::vector<FlowRecord>* into) {
  std::vector<FlowRecord>* const records = into != nullptr && records_ != nullptr ? into : records_;
  const std::vector<Legs> legs = legs_of(flows);
  uint64_t started = 0;
  for (const Legs& l : legs) started += static_cast<uint64_t>(l.count);
  // SimGrid 3.32 keeps every host-to-host transfer (Comm::sendto) in one engine-wide list that each
  // completion searches end to end: F concurrent flows cost O(F^2) (90 % of a 512-GPU plan, whose
  // all-to-all starts 261 632 flows; 72 % of a 2048-GPU MoE plan whose many sets of a few hundred
  // flows each run at once). Transfers between actors sit only in their two actors' lists: once
  // the list would be long, direct flows run as mailbox transfers carried by relay pairs of
  // actors, at most kFlowsPerRelay per pair where the actor budget allows (the same flows, hosts
  // and bytes: the same times). A staged flow's three legs run one after another in its pair:
  // host-staged all-to-alls between vendors once stayed host to host, and 128 GPUs of hethub-768
  // (8192 staged flows) took over 600 s.
  if (const size_t pairs = relay_pairs(legs.size()); pairs > 0) {
    // A set this large takes seconds on its own (an all-to-all over hundreds of GPUs): a bar over
    // its transfer legs, drawn when it takes long, counted as each leg arrives.
    std::optional<TransferBar> bar;
    if (started >= kBarFromLegs && !rounds_bar_) {
      bar.emplace(TransferBar{{static_cast<size_t>(started), "transfers of one collective simulated", kProgressAfterS}});
      bar->bar.pace_from_first_unit();  // the first legs arrive only after every flow's first solve
    }
    run_relays(legs, std::min(pairs, legs.size()), bar ? &*bar : nullptr, records);
    if (bar) bar->bar.finish();
    return started;
  }
  if (legs.size() <= kFlowsPerActor) {
    run_batch(legs, 0, legs.size(), records);
    return started;
  }
  // Otherwise batches of kFlowsPerActor flows, each started and awaited by an actor of its own,
  // keep each actor's list short, and a staged transfer's legs run in its batch's actor, not one
  // of its own (a 512-GPU A100 + MI250X run once ran out of actor stacks).
  const size_t batches = (legs.size() + kFlowsPerActor - 1) / kFlowsPerActor;
  if (batches - 1 > actors_free()) {
    run_batch(legs, 0, legs.size(), records);
    return started;
  }
  live_actors_ += batches - 1;
  std::vector<sg4::ActorPtr> helpers;
  for (size_t first = kFlowsPerActor; first < legs.size(); first += kFlowsPerActor) {
    const size_t last = std::min(legs.size(), first + kFlowsPerActor);
    const int src = legs[first].legs[0].first;
    helpers.push_back(sg4::Actor::create("flows", platform_.endpoint(src),
                                         [this, &legs, first, last, records] { run_batch(legs, first, last, records); }));
  }
  run_batch(legs, 0, kFlowsPerActor, records);
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
  // What the steps add beyond the flows at once; a difference at rounding's scale is none (an
  // estimate summed on all cores against one summed in order: parallel_direct_estimate).
  const double extra = e.step_s - e.phase_s;
  p.extra_s = extra > 1e-9 * e.phase_s ? extra : 0.0;
  return p;
}

uint64_t Network::run(const PreparedSchedule& p, std::vector<FlowRecord>* into) {
  uint64_t started = 0;
  if (p.fidelity == Fidelity::kStep) {
    if (p.setup_s > 0) {
      sg4::this_actor::sleep_for(p.setup_s);
      ++started;
    }
    size_t rounds = 0;
    for (const RoundGroup& g : p.rounds) rounds += static_cast<size_t>(g.count);
    std::optional<Progress> bar;
    if (show_rounds_ && rounds > 1) bar.emplace(rounds, "rounds of the collective simulated (step fidelity)", kProgressAfterS);
    rounds_bar_ = bar.has_value();
    size_t done = 0;
    for (const RoundGroup& g : p.rounds) {
      for (int r = 0; r < g.count; ++r) {
        started += concurrent(g.flows, into);
        if (bar) bar->update(++done);
      }
    }
    if (bar) bar->finish();
    rounds_bar_ = false;
    return started;
  }
  started += concurrent(p.flows, into);
  if (p.extra_s > 0) {
    sg4::this_actor::sleep_for(p.extra_s);
    ++started;
  }
  return started;
}

}  // namespace hetsim
