// File: sim/sim_result.hpp
// What a simulation is asked for and what it gives back: SimOptions, the per-task and per-device
// timings, SimResult, and the fidelity and flow records they name. A header of its own so that
// what reads results (report, trace, critical path, device timing) does not depend on the
// executor that produces them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <string>
#include <utility>
#include <vector>

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
  // A collective identical to one already simulated takes that one's time where nothing else can
  // cross its links meanwhile (sim/network_overlap.hpp: communications that never overlap, as in
  // pure data parallelism, or a collective whose shared links only tasks holding one of its streams
  // cross, as TP collectives inside a node); every_collective (--every-collective) simulates each
  // of them flow by flow instead (the same times to rounding: nothing else shares those links).
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
  // Copies of the repeated step added at a period rather than simulated, where the simulated two
  // were nearly but not exactly periodic (extrapolate_repeats), and how far the iteration time may
  // be off for it (an estimate). Both 0 when every copy was simulated or repeated exactly.
  long extrapolated_copies = 0;
  double extrapolation_bound_s = 0;
  // Copies of a task written once for alike pipelines (ComputeTask/SendTask::copies, a collective's
  // mirror groups) did not keep one pace, so simulate() ran the program with every copy written
  // out (sim/mirror_copies.hpp): these are its times, each mirrored task spanning its copies.
  bool mirrors_diverged = false;
  double wall_s = 0;        // wall-clock time of the simulation itself (not part of results)
  // The critical path's time by kind (critical_path.hpp), where `tasks` cannot show it: a result
  // folded from a simulation with more copies written out (folded_result) keeps two of them, whose
  // times need not lie a period apart. Empty otherwise: the path is walked over `tasks`.
  std::vector<std::pair<std::string, double>> critical_path_by_kind;
};

}  // namespace hetsim
