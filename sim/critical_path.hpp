// File: sim/critical_path.hpp
// The chain of tasks that set a simulated iteration's length: from the task that ends last, back
// through whichever predecessor (a dependency, or the task before it on one of its streams)
// ended last, to the start. Its time is split into the tasks' own spans and the waits between
// them (latency a task spent ready but not yet started is counted as the wait before it). It
// spans the whole iteration. In a program that leaves copies of a repeated step out, the copies
// left out are counted as the path through the two simulated copies is made of.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "sim/program.hpp"
#include "sim/sim_result.hpp"
#include "topologies/cluster.hpp"

namespace hetsim {

struct CriticalPath {
  std::vector<int> tasks;  // in time order
  // Time on the path by kind of task: the task's label with every run of digits replaced by
  // "N" ("gpuN.mbN.layerN.fwd"), plus "(waiting)" for the gaps; largest first.
  std::vector<std::pair<std::string, double>> by_kind;
};

[[nodiscard]] CriticalPath critical_path(const Program& program, const SimResult& result);

// `label` with every run of digits replaced by "N".
[[nodiscard]] std::string label_kind(const std::string& label);

}  // namespace hetsim
