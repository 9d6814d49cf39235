// File: sim/network_overlap.hpp
// Which network tasks of a program can never share a link with another one running at the same
// time. Such a task takes the same time wherever it falls in the iteration, so the executor
// simulates one of each identical kind flow by flow and times the others from it
// (SimOptions::every_collective simulates every one).
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "sim/network.hpp"
#include "sim/program.hpp"
#include "topologies/fabric.hpp"

namespace hetsim {

// True when the program's network tasks (collectives, sends) can never overlap one another: each
// one after the first shares a stream with the one before it or depends on it directly, so they
// run one after the other on an otherwise idle network (a pure data-parallel program: its gradient
// all-reduces all span every GPU's data stream).
[[nodiscard]] bool network_tasks_in_sequence(const Program& prog);

// The shared links that flows cross (Fabric::links() indices, sorted, each once); a flow staged
// through host memory by its three legs (legs_of, as Network runs it). Fat pipes are left out:
// each flow through one gets its whole bandwidth, so they never make flows slow one another.
// Routes are kept once looked up.
class SharedLinks {
 public:
  explicit SharedLinks(const Fabric& fabric) : fabric_(fabric) {}
  [[nodiscard]] std::vector<int> of(const std::vector<Flow>& flows);
  // Of every flow of the schedules, at either fidelity.
  [[nodiscard]] std::vector<int> of(const std::vector<PreparedSchedule>& schedules);
  // Legs looked up so far, kept routes or not (what the look-ups have cost).
  [[nodiscard]] size_t legs() const { return legs_; }

 private:
  void add_leg(int src, int dst, std::vector<int>& out);
  const Fabric& fabric_;
  Route scratch_;
  std::unordered_map<uint64_t, std::vector<int>> routes_;  // (src << 32 | dst) endpoints -> shared links
  size_t legs_ = 0;
};

// For each task of `prog`: true when it is a network task that runs alone on its shared links.
// links[t] holds the shared links of network task t's flows (null for a compute task). A task is
// alone where every task crossing one of its links shares a stream with it: a stream runs its
// tasks one at a time, so no other flow is ever on those links while it runs, and its time
// depends on its own flows only. Checked per link, a little more strictly: the tasks crossing a
// link must all hold one stream in common (tasks that share streams only pairwise count as
// overlapping: a task is then simulated flow by flow, never given a time it might not take).
[[nodiscard]] std::vector<char> alone_on_links(const Program& prog, size_t link_count, const std::vector<const std::vector<int>*>& links);

}  // namespace hetsim
