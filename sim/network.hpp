// File: sim/network.hpp
// Moves bytes between GPUs inside a running simulation: runs schedules (sim/schedule.hpp) as
// SimGrid flows in `step` or `phase` fidelity, staging NVIDIA <-> AMD transfers through host
// memory when the cluster has no cross-vendor RDMA, and optionally records every flow so traces
// can show link utilisation. Call only from inside a SimGrid actor.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "sim/platform.hpp"
#include "sim/schedule.hpp"

namespace hetsim {

enum class Fidelity { kPhase, kStep };
[[nodiscard]] std::string_view fidelity_name(Fidelity f);

// One simulated transfer leg, for link-utilisation traces.
struct FlowRecord {
  double start_s = 0;
  double end_s = 0;
  double bytes = 0;
  int src_endpoint = 0;
  int dst_endpoint = 0;
};

// A schedule made ready to run: its flows per fidelity and the time phase fidelity adds after
// them. Preparing costs route look-ups; a schedule run many times is prepared once.
struct PreparedSchedule {
  Fidelity fidelity = Fidelity::kPhase;
  std::vector<RoundGroup> rounds;  // step
  std::vector<Flow> flows;         // phase: one flow per GPU pair
  double extra_s = 0;              // phase: the rounds' remaining latencies and pipeline fill
  double setup_s = 0;              // step: the schedule's fixed cost, slept before the rounds
};

class Network {
 public:
  Network(const Platform& platform, std::vector<FlowRecord>* records) : platform_(platform), records_(records) {}

  // Runs a schedule to completion:
  //   step:  every round's flows start together; the next round starts when all are done.
  //   phase: one flow per GPU pair carries all its bytes; the rounds' remaining latencies and
  //          pipeline fill (alpha-beta estimate of step minus that of phase) are added after it.
  // Returns the number of SimGrid activities started.
  uint64_t run(const Schedule& schedule, Fidelity fidelity) { return run(prepare(schedule, fidelity)); }
  [[nodiscard]] PreparedSchedule prepare(const Schedule& schedule, Fidelity fidelity) const;
  uint64_t run(const PreparedSchedule& prepared);
  // Point-to-point transfers that start together, each staged when needed; returns when all
  // are done.
  uint64_t concurrent(const std::vector<Flow>& flows);

 private:
  void leg(int src_endpoint, int dst_endpoint, double bytes);

  const Platform& platform_;
  std::vector<FlowRecord>* records_;  // null: not recording
};

}  // namespace hetsim
