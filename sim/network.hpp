// File: sim/network.hpp
// Moves bytes between GPUs inside a running simulation: runs schedules (sim/schedule.hpp) as
// SimGrid flows in `step` or `phase` fidelity, staging NVIDIA <-> AMD transfers through host
// memory when the cluster has no cross-vendor RDMA, and optionally records every flow so traces
// can show link utilisation. Call only from inside a SimGrid actor.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <utility>
#include <string_view>
#include <vector>

#include "base/progress.hpp"
#include "sim/platform.hpp"
#include "sim/sim_result.hpp"
#include "sim/schedule.hpp"

namespace hetsim {

// A schedule made ready to run: its flows per fidelity and the time phase fidelity adds after
// them. Preparing costs route look-ups; a schedule run many times is prepared once.
struct PreparedSchedule {
  Fidelity fidelity = Fidelity::kPhase;
  std::vector<RoundGroup> rounds;  // step
  std::vector<Flow> flows;         // phase: one flow per GPU pair
  double extra_s = 0;              // phase: the rounds' remaining latencies and pipeline fill
  double setup_s = 0;              // step: the schedule's fixed cost, slept before the rounds
};

// A transfer as its legs run one after the other: direct (one leg) or staged through host memory
// (three: device to host, across, host to device), each leg carrying all `bytes`. Endpoints, not GPUs.
struct FlowLegs {
  std::array<std::pair<int, int>, 3> legs{};
  int count = 1;
  double bytes = 0;
};
[[nodiscard]] FlowLegs legs_of(const Fabric& fabric, const Flow& flow);

class Network {
 public:
  Network(const Platform& platform, std::vector<FlowRecord>* records);
  ~Network();
  Network(const Network&) = delete;
  Network& operator=(const Network&) = delete;

  // Runs a schedule to completion:
  //   step:  every round's flows start together; the next round starts when all are done.
  //   phase: one flow per GPU pair carries all its bytes; the rounds' remaining latencies and
  //          pipeline fill (alpha-beta estimate of step minus that of phase) are added after it.
  // Returns the number of SimGrid activities started.
  // Where the network records flows, `into` (when not null) takes this call's flows instead of
  // the records the network was made with (the executor keeps a collective's own, to repeat them).
  uint64_t run(const Schedule& schedule, Fidelity fidelity) { return run(prepare(schedule, fidelity)); }
  [[nodiscard]] PreparedSchedule prepare(const Schedule& schedule, Fidelity fidelity) const;
  uint64_t run(const PreparedSchedule& prepared, std::vector<FlowRecord>* into = nullptr);
  // Point-to-point transfers that start together, each staged when needed; returns when all
  // are done.
  uint64_t concurrent(const std::vector<Flow>& flows, std::vector<FlowRecord>* into = nullptr);
  [[nodiscard]] bool records() const { return records_ != nullptr; }

  // Flows one actor starts and awaits at most (see concurrent()).
  static constexpr size_t kFlowsPerActor = 128;
  // Host-to-host flows in flight, this set included, from which relays (mailbox transfers, see
  // run_relays) pay for their migrations and the context switches each transfer costs them, and
  // the transfers a relay pair carries where the budget allows (each migration scans the pair's
  // list of transfers). With pairs started anew for each set, measured on 1 GiB rings: host-to-host
  // 196 ms against relays 147 ms at 4096 flows, 33 against 43 ms at 1024; 32 per pair 3.7 s at
  // 65 536 flows, 16 per pair 3.8 s, 64 4.0 s, 128 4.8 s, 256 12.1 s. With pairs kept for the run
  // (2-core box, 2026-11-27, tests/bench/results/README.md): relaying from 512 flows in flight took
  // a DeepSeek-V3 iteration on 2048 H100 from 13.7-14.2 s (4096) to 8.8-9.3 s, GPT-3 on 4096 GPUs
  // from 12.0-12.2 s to 11.6-12.5 s. Every set is relayed from there, however small: sets of fewer
  // than 32 flows staying host to host left Llama 3.1 405B as TP 8 x PP 16 x DP 128 on 16 384 H100
  // (thousands of pipeline sends of 8 transfers in flight) at 358 s against 38 s, and GPT-3 on 4096
  // GPUs at 11.6 s against 7.5 s; from 256 in flight, no faster (2026-11-28).
  static constexpr size_t kRelaysFromFlows = 512;
  static constexpr size_t kFlowsPerRelay = 32;
  // Transfer legs of one relayed set from which it shows a bar of its own (sim/network.cpp).
  static constexpr size_t kBarFromLegs = 65536;
  // Actors started inside one simulation (the executor's communication workers, batches of flows,
  // relay pairs of mailbox transfers) share one budget: each stack is two memory mappings under
  // the kernel's vm.max_map_count, of which 16 384 are left to everything else (24 573 actors with
  // the default 65 530; 8192 where the limit cannot be read). Mailbox transfers and batch helpers
  // use what the reserved actors leave: past it, flows fall back to host-to-host transfers and
  // batches run in the calling actor alone.
  // The address space this process may still map (ulimit -v) bounds them too: each stack takes
  // SimGrid's contexts/stack-size and a guard page of it, and SimGrid aborts a run whose stack
  // does not fit ("Failed to allocate stack").
  [[nodiscard]] static size_t default_actor_budget();
  // Actor stacks the address space left to this process holds, half of it kept for the run's
  // heap; SIZE_MAX without a limit. Call inside a SimGrid engine (it reads the stack size).
  [[nodiscard]] static size_t stacks_that_fit();
  // Bytes of address space one actor's stack takes.
  [[nodiscard]] static size_t stack_bytes();
  // This process's address-space limit in bytes (ulimit -v); 0 when unlimited.
  [[nodiscard]] static size_t address_space_limit();
  // Actors this network may start: `budget` (0: default_actor_budget()), of which `reserved` are
  // set aside for actors started outside it (the executor's workers).
  void set_actor_budget(size_t budget, size_t reserved) {
    budget_ = budget > 0 ? budget : default_actor_budget();
    reserved_ = reserved;
  }
  // Concurrent flows from which relays run (0: kRelaysFromFlows); tests lower it.
  void set_relays_from(size_t flows) { relays_from_ = flows > 0 ? flows : kRelaysFromFlows; }
  // A run that is one collective (hetsim collective): at step fidelity, one bar over its rounds
  // (with an ETA for the whole collective) in place of a bar for each large round.
  void show_rounds(bool on) { show_rounds_ = on; }

 private:
  using Legs = FlowLegs;
  [[nodiscard]] std::vector<Legs> legs_of(const std::vector<Flow>& flows) const;
  // Runs flows[first, last) to completion from the calling actor, recording them in `records`.
  void run_batch(const std::vector<Legs>& flows, size_t first, size_t last, std::vector<FlowRecord>* records);
  // Relay pairs (two actors each) for `transfers` flows: one per kFlowsPerRelay, within the
  // actor budget; 0 where relays should not run (few flows in flight).
  [[nodiscard]] size_t relay_pairs(size_t transfers) const;
  // A large set's bar (concurrent()) and the legs of the set arrived so far.
  struct TransferBar {
    Progress bar;
    size_t arrived = 0;
  };
  // Runs `flows` as mailbox transfers carried by `pairs` relay pairs, a staged flow's legs one
  // after another in its pair; each arrived leg counts on `bar` (if any) and is recorded in `records`.
  void run_relays(const std::vector<Legs>& flows, size_t pairs, TransferBar* bar, std::vector<FlowRecord>* records);
  [[nodiscard]] size_t actors_free() const { return budget_ > reserved_ + live_actors_ ? budget_ - reserved_ - live_actors_ : 0; }

  const Platform& platform_;
  std::vector<FlowRecord>* records_;  // null: not recording
  size_t budget_ = default_actor_budget();
  size_t reserved_ = 0;               // actors set aside for the executor
  size_t relays_from_ = kRelaysFromFlows;
  size_t live_actors_ = 0;            // relay and batch actors running now
  size_t live_direct_ = 0;            // host-to-host transfers in flight (SimGrid's engine-wide list)
  bool show_rounds_ = false;
  bool rounds_bar_ = false;           // a bar over the rounds is up: rounds show none of their own
  // Relay pairs kept for the run (daemon actors: SimGrid ends them with it), the idle ones ready
  // for the next set of transfers.
  struct RelayPair;
  RelayPair& idle_relay(int src, int dst);
  std::vector<std::unique_ptr<RelayPair>> relays_;
  std::vector<RelayPair*> idle_relays_;
};

}  // namespace hetsim
