// File: sim/program.hpp
// The Program: the contract between planner and simulator. For one training iteration it lists
// every task of every device (compute kernels, collectives over a device group, point-to-point
// sends) with dependency edges and memory effects. The planner writes Programs; the simulator
// executes them and knows nothing of how they were made.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "kernels_profile/kernel_table.hpp"

namespace hetsim {

// Work on one device's compute stream. The duration was resolved by the planner through the
// cost model; the simulator adds contention, dependencies and overlap.
struct ComputeTask {
  int device = 0;
  double duration_s = 0;
  double flops = 0;               // model FLOPs done (for utilisation figures)
  double memory_delta_bytes = 0;  // > 0: allocated at start (saved activations); < 0: freed at end
  // Devices that run the same kernel in lockstep with `device` (the other ranks of a tensor-
  // parallel group): simulated once on `device`'s stream, accounted on every one of them. The
  // program's dependencies must keep their own compute tasks from overlapping it.
  std::vector<int> mirrors{};
  // The device and its mirrors are `copies` runs of equal length, in order: the kernel of as many
  // data-parallel pipelines written once (planner/hybrid/pipeline_mirrors.hpp), each run one
  // pipeline's TP group. The simulator checks that every run keeps one pace (SimResult::
  // mirrors_diverged where not).
  int copies = 1;
  friend bool operator==(const ComputeTask&, const ComputeTask&) = default;
};

// The communication streams of a device. NCCL runs each communicator on a CUDA stream of its
// own, so tensor-parallel collectives, data-parallel gradient synchronisation and pipeline
// sends overlap one another, while each stream runs its own tasks in program order. Pipeline
// transfers towards the next stage (activations) and the previous one (gradients) go through
// different communicators, as in Alpa's cross-mesh communicators: two streams. Expert
// parallelism's token dispatch and combine (and expert TP's gathers) run on a stream of their
// own, as Megatron-Core's combined 1F1B does when it hides them under another micro-batch. The
// flex dispatcher's inter-node part (an all-to-all over each rail) has one more, beside its
// in-node part, as HybridEP pipelines its network and NVLink stages.
enum class CommStream { kData, kTensor, kPipeline, kPipelineBack, kExpert, kExpertRail };
inline constexpr int kCommStreams = 6;
[[nodiscard]] std::string_view comm_stream_name(CommStream s);  // "comm", "tp", "p2p", "p2p.back", "ep", "ep.rail"

enum class CollectiveOp { kAllReduce, kAllGather, kReduceScatter, kBroadcast, kReduce, kAllToAll };

// How a collective moves its bytes. kAuto picks the fastest applicable one for the size and the
// links the group spans (see sim/collective.hpp).
enum class Algorithm { kAuto, kRing, kTree, kHierarchical, kChain, kPairwise, kGrouped, kNvls, kMesh, kPxn };

// A collective over `group` (device indices; members are ordered by topology, as NCCL does) on
// each member's communication stream. It starts when every member has reached it and its
// dependencies are done. Sizes follow the nccl-tests conventions: `size_bytes` is the full
// buffer (all-reduce, broadcast, reduce: each member's buffer; all-gather: the gathered output;
// reduce-scatter: the input; all-to-all: what each member sends in total).
struct CollectiveTask {
  CollectiveOp op = CollectiveOp::kAllReduce;
  std::vector<int> group;
  double size_bytes = 0;
  Algorithm algorithm = Algorithm::kAuto;
  int root = 0;                     // broadcast / reduce: the root's device index
  std::vector<double> shard_bytes;  // uneven all-gather / reduce-scatter: bytes per member (in
                                    // `group` order, summing to size_bytes); empty = even
  CommStream stream = CommStream::kData;
  // Further groups of group.size() devices that run the same collective from the same moment (the
  // TP groups of data-parallel pipelines that nothing tells apart, written once): one task on the
  // streams of every group's members, each group's flows simulated, done when all are done.
  std::vector<std::vector<int>> mirror_groups{};

  // The collective of group k (0: this one's; k >= 1: mirror_groups[k - 1], the root and shard
  // sizes carried over member by member).
  [[nodiscard]] CollectiveTask part(size_t k) const;
  [[nodiscard]] size_t parts() const { return 1 + mirror_groups.size(); }
  // Calls f(device) for every member of every group.
  template <class F>
  void for_each_member(F&& f) const {
    for (int d : group) f(d);
    for (const std::vector<int>& g : mirror_groups) {
      for (int d : g) f(d);
    }
  }
  friend bool operator==(const CollectiveTask&, const CollectiveTask&) = default;
};

// A collective with everything else at its default (automatic algorithm, even shards).
inline CollectiveTask collective(CollectiveOp op, std::vector<int> group, double size_bytes) {
  CollectiveTask t;
  t.op = op;
  t.group = std::move(group);
  t.size_bytes = size_bytes;
  return t;
}

// A point-to-point transfer, on the sender's pipeline stream (pipeline sends never queue behind
// collectives).
struct SendTask {
  int src = 0;
  int dst = 0;
  double size_bytes = 0;
  CommStream stream = CommStream::kPipeline;
  // Further (src, dst) transfers of `size_bytes` each that start at the same moment (the other
  // ranks of a tensor-parallel group sending their slices in lockstep): one task on `src`'s
  // stream, every transfer simulated, done when all have arrived. Their senders' streams do not
  // hold the task; the program's dependencies must order it against their other sends.
  std::vector<std::pair<int, int>> mirrors{};
  // The transfers are `copies` runs of equal length, in order: one pipeline's each, of as many
  // data-parallel pipelines written once. Each run is simulated as a communication of its own (as
  // the pipelines' own tasks would be); the simulator checks that all end together.
  int copies = 1;

  // Every transfer of the task, (src, dst) first.
  [[nodiscard]] std::vector<std::pair<int, int>> transfers() const;
  // Copy k's transfers.
  [[nodiscard]] std::vector<std::pair<int, int>> copy_transfers(size_t k) const;
  friend bool operator==(const SendTask&, const SendTask&) = default;
};

struct Task {
  std::string label;
  std::variant<ComputeTask, CollectiveTask, SendTask> body;
  std::vector<int> deps;  // indices of earlier tasks that must finish first
  friend bool operator==(const Task&, const Task&) = default;
};

// The streams of a device as the executor numbers them: compute, then the communication streams.
inline constexpr size_t kStreamsPerDevice = 1 + kCommStreams;

// Calls f(stream), stream = device * kStreamsPerDevice + (0: compute, 1 + CommStream), for every
// stream that runs `task` in program order: a compute task's device's compute stream, a
// collective's stream on every member (of its mirror groups too), a send's stream on its sender
// (not on its mirrors').
template <class F>
void for_each_stream(const Task& task, F&& f) {
  if (const auto* c = std::get_if<ComputeTask>(&task.body)) {
    f(static_cast<size_t>(c->device) * kStreamsPerDevice);
  } else if (const auto* g = std::get_if<CollectiveTask>(&task.body)) {
    g->for_each_member([&](int d) { f(static_cast<size_t>(d) * kStreamsPerDevice + 1 + static_cast<size_t>(g->stream)); });
  } else if (const auto* s = std::get_if<SendTask>(&task.body)) {
    f(static_cast<size_t>(s->src) * kStreamsPerDevice + 1 + static_cast<size_t>(s->stream));
  }
}

struct ProgramDevice {
  double static_memory_bytes = 0;  // held all iteration: weights, gradients, optimizer state, reserve
  double peak_flops = 0;           // peak of the dtype this device computes in (for MFU)
  friend bool operator==(const ProgramDevice&, const ProgramDevice&) = default;
};

// Identical gradient-accumulation steps the program holds only twice: tasks [first, first + size)
// are one step, [first + size, first + 2 * size) the next, task for task, and the iteration runs
// `more` further copies right after the second that the program leaves out, so a step costs no
// memory however many there are. The simulator runs the two, checks that the second is the first
// shifted by one period (every task: start and end), and adds `more` periods; where it is not
// (no periodic regime yet) it simulates every copy. SimOptions::every_step always does.
struct RepeatedStep {
  int first = 0;
  int size = 0;
  long more = 0;
  friend bool operator==(const RepeatedStep&, const RepeatedStep&) = default;
};

struct Program {
  std::string strategy;
  std::vector<ProgramDevice> devices;
  std::vector<Task> tasks;  // each stream runs its tasks in this order
  double samples = 0;       // per iteration
  double tokens = 0;        // per iteration
  double model_flops = 0;   // per iteration, without recompute
  // Compute seconds of all tasks by where their cost came from (index: CostSource of
  // kernels_profile/kernel_table.hpp: measured, interpolated, fitted, roofline, layer profile, scaled).
  std::array<double, kCostSources> compute_source_s{};
  std::optional<RepeatedStep> repeated_step;

  // Appends a task; throws InputError (naming the global batch) past max_program_tasks().
  int add(Task t) {
    if (tasks.size() >= max_program_tasks()) check_program_size(tasks.size() + 1);
    tasks.push_back(std::move(t));
    return static_cast<int>(tasks.size()) - 1;
  }

  // A program holds every task of one iteration: ~500 bytes each once simulated (measured:
  // gpt3-1.3b dp-even, global batch 16384 on a100-v100-2x2, 852k tasks, 411 MB peak RSS, 2-core
  // development machine, 2026-11-23), held twice while simulated (the program and its timings in
  // the simulation process): at most a quarter of this machine's memory goes to them.
  [[nodiscard]] static size_t max_program_tasks();
  // Throws InputError (naming the global batch) when `tasks` exceeds max_program_tasks(); builders
  // that know their size call it before building.
  static void check_program_size(double tasks);
  friend bool operator==(const Program&, const Program&) = default;
};

[[nodiscard]] std::string_view collective_name(CollectiveOp op);
[[nodiscard]] std::string_view algorithm_name(Algorithm a);
// Every name collective_name / algorithm_name gives, in enum order, and the way back.
[[nodiscard]] const std::vector<std::string>& collective_names();
[[nodiscard]] const std::vector<std::string>& algorithm_names();
[[nodiscard]] std::optional<CollectiveOp> collective_from_name(std::string_view name);
[[nodiscard]] std::optional<Algorithm> algorithm_from_name(std::string_view name);

// Structural checks (device indices in range, dependencies pointing backwards, groups without
// repeats). Returns an empty string when valid, else what is wrong: a planner bug, not user input.
[[nodiscard]] std::string validate(const Program& p);

}  // namespace hetsim
