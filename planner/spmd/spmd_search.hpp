// File: planner/spmd/spmd_search.hpp
// Best-first (A*) search for an SPMD program: one sharding rule per operator, conversions
// between layouts as collectives, for fixed per-device shares. The cost of a program is the sum
// over operators of the slowest device's compute plus the operator's communication (HAP's
// barrier model), or, in overlap mode, with each operator's gradient synchronisation hidden
// behind backward compute where it fits. The heuristic is an admissible lower bound: the
// remaining operators' cheapest compute, no communication. `kZero` gives HAP's uniform-cost
// search. States with the same position and live-tensor layouts are merged (dominance), and
// states costlier than the best complete program are dropped.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "kernels_profile/kernel_table.hpp"
#include "planner/spmd/sharding.hpp"

namespace hetsim {

// Alpha-beta time of a collective over all devices with even shards: alpha + beta * bytes.
struct CollectiveCost {
  double alpha_s = 0;
  double beta_s_per_byte = 0;
  [[nodiscard]] double time(double bytes) const { return alpha_s + beta_s_per_byte * bytes; }
  // Uneven all-gather / reduce-scatter of a `bytes` tensor over n devices, padded to the largest
  // share: as an even collective of n * max_share bytes.
  [[nodiscard]] double padded(double bytes, double n, double max_share) const { return time(bytes * n * max_share); }
  // The same as grouped broadcasts (reductions): n latencies, every link carrying the others'
  // shards, about (1 - smallest share) of the tensor.
  [[nodiscard]] double grouped(double bytes, double n, double min_share) const {
    return alpha_s * n + beta_s_per_byte * bytes * (1 - min_share) * n / (n - 1);
  }
};

// One operator as the search sees it: full-batch times per device type, sizes, rules.
struct SpmdOp {
  std::string name;
  OpKind kind = OpKind::kLinear;
  std::vector<int> inputs;           // indices of producer ops
  std::vector<double> time_s;        // per device type: forward + backward of the whole batch
  std::vector<double> bwd_s;         // per device type: backward alone (the overlap window)
  std::vector<std::array<double, kCostSources>> sources;  // per device type: seconds by cost source (CostSource order)
  double output_bytes = 0;           // full output tensor
  double param_elems = 0;            // parameters owned
  double param_bytes = 0;            // gradient bytes (dtype)
  std::vector<double> param_state_bytes;  // per device type: weights + gradients + optimizer state (FP8 weight copies vary)
  std::vector<double> saved_bytes;   // per device type: activations kept for backward, whole batch
  std::vector<Rule> rules;
};

struct SpmdProblem {
  int devices = 0;
  // The program runs on one global micro-batch (ops sized for it) `accumulation` times per
  // iteration, summing gradients; gradient synchronisation happens once per iteration.
  double accumulation = 1;
  long samples = 1;  // samples per iteration (the global batch), split among devices by share
  std::vector<int> type_of;          // device -> type
  std::vector<SpmdOp> ops;           // topological order
  CollectiveCost all_gather, reduce_scatter, all_reduce, all_to_all;
  std::vector<double> memory_capacity;  // per device, bytes available for model state and activations
  // Per device type: the framework's host time before each forward and each backward pass (the
  // calibration profile's pass_host); empty or 0: none.
  std::vector<double> pass_host_s;

  [[nodiscard]] const CollectiveCost& cost_of(Comm c) const {
    switch (c) {
      case Comm::kAllGather: return all_gather;
      case Comm::kReduceScatter: return reduce_scatter;
      case Comm::kAllToAll: return all_to_all;
      default: return all_reduce;
    }
  }
};

enum class Heuristic { kZero, kAdmissible };
enum class CostMode { kBarrier, kOverlap };

struct SearchOptions {
  Heuristic heuristic = Heuristic::kAdmissible;
  CostMode cost = CostMode::kOverlap;
  bool memory_limit = true;
  bool sfb = true;                   // sufficient factor broadcasting for data-parallel linear layers
  bool grouped_collectives = true;   // grouped broadcasts vs padded all-gather for uneven shards
  friend bool operator==(const SearchOptions&, const SearchOptions&) = default;
};

// What the search chose for one operator.
struct OpChoice {
  int rule = 0;
  bool sfb = false;                  // gradient synchronised by broadcasting sufficient factors
};

struct SpmdProgram {
  std::vector<OpChoice> choices;
  double cost_s = 0;
};

struct SearchStats {
  long expanded = 0;
  long generated = 0;
  double seconds = 0;
};

struct SearchResult {
  bool found = false;
  SpmdProgram program;
  SearchStats stats;
};

[[nodiscard]] SearchResult search_program(const SpmdProblem& p, const std::vector<double>& ratios,
                                          const SearchOptions& options);
// Every combination of rules (for small problems and tests): the optimum by brute force.
[[nodiscard]] SearchResult enumerate_programs(const SpmdProblem& p, const std::vector<double>& ratios,
                                              const SearchOptions& options);
// The host time every program pays per iteration, whatever its rules: the slowest device's pass_host
// before each forward and backward pass of each accumulation step (as the program writes it,
// spmd_program.cpp). Part of every cost below.
[[nodiscard]] double pass_host_cost(const SpmdProblem& p);
// The cost of a complete program under `options` (infinite when a conversion is impossible or
// memory does not fit).
[[nodiscard]] double program_cost(const SpmdProblem& p, const std::vector<double>& ratios, const SearchOptions& options,
                                  const std::vector<OpChoice>& choices);

}  // namespace hetsim
