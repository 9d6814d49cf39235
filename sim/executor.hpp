// File: sim/executor.hpp
// Executes a Program on a Cluster in SimGrid. Each GPU has a compute stream and communication
// streams (data-parallel collectives, tensor-parallel collectives, pipeline sends), each running
// its tasks in program order once their dependencies are done, so communication overlaps compute
// wherever the program allows. One event loop runs them all (kernels are its timers); each
// communication in flight runs in a worker actor (a pool, reused).
#pragma once

#include <cstdint>
#include <vector>

#include "sim/collective.hpp"
#include "sim/network.hpp"
#include "sim/program.hpp"
#include "sim/sim_result.hpp"
#include "topologies/cluster.hpp"

namespace hetsim {

// Simulates `program` on `cluster` in a SimGrid engine that has never run (a fork of the
// cluster's platform server, or of this process for large programs: sim/platform_server.hpp).
// Throws std::logic_error when the program is malformed (a planner bug), InputError when its
// repeated step must be written out (every_step, or not periodic) and that is too large.
[[nodiscard]] SimResult simulate(const Program& program, const Cluster& cluster, const SimOptions& options = {});
// Threads may call simulate() at once (each simulation runs in a process of its own). Called from
// the main thread before `concurrent` of them do, on `cluster`.
void prepare_simulations(const Cluster& cluster, size_t concurrent);

}  // namespace hetsim
