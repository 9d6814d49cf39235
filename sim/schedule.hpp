// File: sim/schedule.hpp
// A collective algorithm as data: pipelined edges between GPUs, each carrying `chunks` chunks
// one round apart starting at round `offset`. Rings, chains, trees and pairwise exchanges are
// all schedules; a collective is one or more schedules run back to back (hierarchical ones).
// Also the analytic alpha-beta estimate of a schedule on a Fabric, used to choose algorithms and
// to add the per-step costs that `phase` fidelity does not simulate message by message.
#pragma once

#include <functional>
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

// One pipelined chain from every member around one ring, all at once (grouped broadcasts or
// reductions): chain i carries chunks[i] chunks of chunk_bytes[i] from ring[i] along the ring
// through the n - 1 following members (towards_root: the reverse, from ring[i-1] back to ring[i]),
// exactly the edges a chain of its own would have, chain after chain. Every chain crosses the same
// n ring pairs, so it is held as n chains, not n(n-1) edges, and rounds and flows are computed
// pair by pair: memory O(n), not O(n^2) (a grouped all-gather over 8192 GPUs is 67 M edges).
struct RingChains {
  std::vector<int> ring;
  std::vector<int> chunks;          // per chain (ring order); 0: no chain
  std::vector<double> chunk_bytes;  // per chain
  bool towards_root = false;
};

// Every member sends to every other, one shift a round (pairwise all-to-all): in round r
// (0 <= r <= n - 2) ring[j] sends chunk_bytes to ring[(j + r + 1) % n]. at_once: all the shifts
// in one round, every member sending to all the others at once (the direct exchange). Held as
// this, not as the n(n-1) edges it stands for; each round's flows are made when it is visited.
struct RingShifts {
  std::vector<int> ring;
  double chunk_bytes = 0;
  bool at_once = false;
};

// NCCL's all-to-all with PXN (sim/collective.cpp): inside each node every member sends every
// other one pair_bytes x (nodes) (its own share and what it relays), and on each rail every node's
// member sends every other node's pair_bytes x (members per node); the two phases run as one
// pipeline of `pieces` pieces, exactly the edges pipelined({intra, inter}, pieces) would hold
// (sim/rail_exchange.hpp). Held as this, not as those g·m·(m−1) + m·g·(g−1) edges (33.5 M over
// 16 384 GPUs): an estimate is made from it without them.
struct RailExchange {
  std::vector<std::vector<int>> nodes;  // members by node, each at the same local positions (rails)
  double pair_bytes = 0;                // what one member sends each other member
  int pieces = 1;
};

struct Schedule {
  std::vector<PipeEdge> edges;
  RingChains chains;   // a schedule has one of edges, chains, shifts and rails
  RingShifts shifts;
  RailExchange rails;
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
// The same groups one at a time (the group passed is reused): what holds one round's flows only.
void for_each_round_group(const Schedule& s, const std::function<void(const RoundGroup&)>& visit);
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
