// File: sim/schedule.hpp
// A collective algorithm as data: pipelined edges between GPUs, each carrying `chunks` chunks
// one round apart starting at round `offset`. Rings, chains, trees and pairwise exchanges are
// all schedules; a collective is one or more schedules run back to back (hierarchical ones).
// Also the analytic alpha-beta estimate of a schedule on a Fabric, used to choose algorithms and
// to add the per-step costs that `phase` fidelity does not simulate message by message.
#pragma once

#include <vector>

#include "topologies/fabric.hpp"

namespace hetsim {

struct PipeEdge {
  int src = 0;  // GPU indices
  int dst = 0;
  int offset = 0;  // round in which chunk 0 crosses this edge
  int chunks = 1;
  double chunk_bytes = 0;
};

struct Schedule {
  std::vector<PipeEdge> edges;
  double setup_s = 0;  // a fixed cost paid once before the first round (NVLS synchronisation)
  [[nodiscard]] int rounds() const;  // rounds until the last chunk has crossed its last edge
};

// A transfer as the simulator runs it: direct, or staged through host memory in three legs.
struct Flow {
  int src = 0;
  int dst = 0;
  double bytes = 0;
};

// The flows active in each interval of rounds with the same active edge set, for `step` runs
// and estimates. Each entry: first round, number of rounds, flows (merged per GPU pair).
struct RoundGroup {
  int first = 0;
  int count = 0;
  std::vector<Flow> flows;
};
[[nodiscard]] std::vector<RoundGroup> round_groups(const Schedule& s);
// All bytes of each GPU pair as one flow (what `phase` fidelity starts).
[[nodiscard]] std::vector<Flow> merged_flows(const Schedule& s);

// Alpha-beta time of a set of concurrent flows on idle links: the slowest flow's latency plus
// its bytes over its route's most loaded link (load = all these flows' bytes on that link).
// Staged flows (NVIDIA <-> AMD without RDMA) pay their three legs one after the other.
[[nodiscard]] double concurrent_time(const std::vector<Flow>& flows, const Fabric& fabric);

struct ScheduleEstimate {
  double step_s = 0;   // every round separately: what `step` fidelity simulates
  double phase_s = 0;  // all bytes of each edge as one flow, one latency: the `phase` flows alone
};
[[nodiscard]] ScheduleEstimate estimate(const Schedule& s, const Fabric& fabric);
// Its step_s alone (what choosing an algorithm compares), without building the merged flows.
[[nodiscard]] double step_estimate(const Schedule& s, const Fabric& fabric);

}  // namespace hetsim
