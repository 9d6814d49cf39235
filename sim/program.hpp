// File: sim/program.hpp
// The Program: the contract between planner and simulator. For one training iteration it lists
// every task of every device (compute kernels, collectives over a device group, point-to-point
// sends) with dependency edges and memory effects. The planner writes Programs; the simulator
// executes them and knows nothing of how they were made.
#pragma once

#include <string>
#include <variant>
#include <vector>

namespace hetsim {

// Work on one device's compute stream. The duration was resolved by the planner through the
// cost model; the simulator adds contention, dependencies and overlap.
struct ComputeTask {
  int device = 0;
  double duration_s = 0;
  double flops = 0;               // model FLOPs done (for utilisation figures)
  double memory_delta_bytes = 0;  // > 0: allocated at start (saved activations); < 0: freed at end
};

enum class CollectiveOp { kAllReduce };

// A collective over `group` (device indices in ring order) on each member's communication
// stream. It starts when every member has reached it and its dependencies are done.
struct CollectiveTask {
  CollectiveOp op = CollectiveOp::kAllReduce;
  std::vector<int> group;
  double size_bytes = 0;  // the full buffer each member contributes
};

// A point-to-point transfer, on the sender's communication stream.
struct SendTask {
  int src = 0;
  int dst = 0;
  double size_bytes = 0;
};

struct Task {
  std::string label;
  std::variant<ComputeTask, CollectiveTask, SendTask> body;
  std::vector<int> deps;  // indices of earlier tasks that must finish first
};

struct ProgramDevice {
  double static_memory_bytes = 0;  // held all iteration: weights, gradients, optimizer state, reserve
  double peak_flops = 0;           // peak of the dtype this device computes in (for MFU)
};

struct Program {
  std::string strategy;
  std::vector<ProgramDevice> devices;
  std::vector<Task> tasks;  // each stream runs its tasks in this order
  double samples = 0;       // per iteration
  double tokens = 0;        // per iteration
  double model_flops = 0;   // per iteration, without recompute

  int add(Task t) {
    tasks.push_back(std::move(t));
    return static_cast<int>(tasks.size()) - 1;
  }
};

[[nodiscard]] std::string_view collective_name(CollectiveOp op);

// Structural checks (device indices in range, dependencies pointing backwards, groups without
// repeats). Returns an empty string when valid, else what is wrong: a planner bug, not user input.
[[nodiscard]] std::string validate(const Program& p);

}  // namespace hetsim
