// File: sim/trace.hpp
// Chrome trace (JSON, open in Perfetto or chrome://tracing) of a simulated iteration: one process
// per node, one track per GPU stream (compute, comm, tp, p2p), one slice per task; and, when the run
// recorded its flows (SimOptions::record_flows), a "network" process with one counter track per
// busy link showing the bandwidth in use (GB/s), each flow counted at its mean rate.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

#include "sim/program.hpp"
#include "sim/sim_result.hpp"
#include "topologies/cluster.hpp"

namespace hetsim {

[[nodiscard]] nlohmann::json chrome_trace(const Program& program, const Cluster& cluster, const SimResult& result);
// The same trace written to `out` event by event (compact JSON, one event a line), never held whole:
// a 1024-GPU iteration's trace holds millions of events (its flows' link counters most of them).
void write_chrome_trace(std::ostream& out, const Program& program, const Cluster& cluster, const SimResult& result);

}  // namespace hetsim
