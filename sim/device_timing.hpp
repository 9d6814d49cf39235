// File: sim/device_timing.hpp
// Per-device figures from task timings: compute-stream seconds and the busy intervals of each
// device's streams, as the executor reports them (DeviceTiming).
#pragma once

#include <cstddef>
#include <vector>

#include "sim/program.hpp"
#include "sim/sim_result.hpp"
#include "topologies/cluster.hpp"
#include "sim/program.hpp"

namespace hetsim {

struct StreamIntervals {
  double compute_s = 0;               // compute stream busy (mirrors included)
  std::vector<TaskTiming> compute;    // its intervals
  std::vector<TaskTiming> comm;       // any communication stream (collectives: every member; sends: the sender)
};

// Of tasks [begin, end), each `timing` moved by `shift_s`.
[[nodiscard]] std::vector<StreamIntervals> stream_intervals(const Program& program, const std::vector<TaskTiming>& timing,
                                                            size_t begin, size_t end, double shift_s = 0);

// Length of the union of intervals.
[[nodiscard]] double union_length(std::vector<TaskTiming> intervals);

// DeviceTiming of each device (peak memory left at 0).
[[nodiscard]] std::vector<DeviceTiming> device_timings(const std::vector<StreamIntervals>& streams);

}  // namespace hetsim
