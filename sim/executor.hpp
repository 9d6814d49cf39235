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
#include "topologies/cluster.hpp"

namespace hetsim {

struct SimOptions {
  Fidelity fidelity = Fidelity::kPhase;
  // A compute task that starts while a collective runs on its GPU takes the GPU's
  // collective_interference times longer (kernels_profile: measured where it exists). false
  // (--no-interference): overlapped collectives cost compute nothing, as before 2026-11-27.
  bool collective_interference = true;
  bool record_flows = false;  // keep every transfer leg (for link-utilisation traces)
  // Builders simulate identical gradient-accumulation steps one by one (--every-step) instead of
  // as one task of their summed length (the same times: nothing runs beside them), and the
  // simulator writes out every copy of a Program::repeated_step instead of adding periods.
  bool every_step = false;
  // Where the program's communications can never overlap one another (pure data parallelism),
  // a collective identical to one already simulated takes that one's time on the idle network;
  // every_collective (--every-collective) simulates each of them flow by flow instead (the same
  // times: nothing else shares the network with them).
  bool every_collective = false;
  // Builders write the compute of data-parallel replicas that nothing tells apart (the same GPU
  // type, node health and share of the batch) once, mirrored on all of them; every_replica
  // (--every-replica) writes each GPU's own (the same times: they run in lockstep).
  bool every_replica = false;
  // SimGrid actors a simulation may start for its communications (each stack is two memory
  // mappings under vm.max_map_count); 0: as many as that limit allows with 16 384 mappings to spare.
  size_t actor_budget = 0;
  // Concurrent flows from which transfers run between relay actors rather than host to host (the
  // same times; sim/network.hpp); 0: Network::kRelaysFromFlows. Tests lower it.
  size_t relays_from_flows = 0;
  // Programs of up to this many tasks run on the cluster's platform server (built once per
  // process), larger ones in a process that builds its own platform (the same times;
  // sim/platform_server.hpp); 0: the default (2^18). Tests set it.
  size_t served_tasks = 0;
};

struct TaskTiming {
  double start_s = 0;
  double end_s = 0;
};

struct DeviceTiming {
  double compute_s = 0;  // compute stream busy
  double comm_s = 0;     // any communication stream busy (collectives from the moment all members arrived)
  double busy_s = 0;     // union of both streams' busy intervals
  double peak_memory_bytes = 0;
};

struct SimResult {
  double iteration_time_s = 0;  // when the last task ends
  std::vector<TaskTiming> tasks;
  std::vector<DeviceTiming> devices;
  uint64_t activities = 0;  // SimGrid activities started (compute, flows, latency waits)
  std::vector<FlowRecord> flows;  // when SimOptions::record_flows
  // Program::repeated_step: how much later the tasks after its two copies ran than the program's
  // order shows (the copies it leaves out); those tasks carry their real times.
  double repeat_gap_s = 0;
  double wall_s = 0;        // wall-clock time of the simulation itself (not part of results)
};

// Simulates `program` on `cluster` in a SimGrid engine that has never run (a fork of the
// cluster's platform server, or of this process for large programs: sim/platform_server.hpp).
// Throws std::logic_error when the program is malformed (a planner bug), InputError when its
// repeated step must be written out (every_step, or not periodic) and that is too large.
[[nodiscard]] SimResult simulate(const Program& program, const Cluster& cluster, const SimOptions& options = {});

}  // namespace hetsim
