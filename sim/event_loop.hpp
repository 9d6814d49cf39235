// File: sim/event_loop.hpp
// One simulation of a Program in the SimGrid engine of this process, as one event loop: the task
// timings, memory peaks, activities and flows as CBOR, for sim/executor.cpp to read back in the
// calling process. Internal to sim/.
#pragma once

#include <string>

#include "sim/platform.hpp"
#include "sim/program.hpp"
#include "sim/sim_result.hpp"
#include "topologies/cluster.hpp"

namespace hetsim {

[[nodiscard]] std::string run_program(const Program& prog, const Cluster& cluster, const Platform& platform, const SimOptions& opts);

}  // namespace hetsim
