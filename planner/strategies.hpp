// File: planner/strategies.hpp
// The strategies hetsim knows, evaluated the same way: build the Program, check memory,
// simulate it, and report; plus the upper bound that every plan's efficiency is measured against.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "base/disk_cache.hpp"
#include "kernels_profile/cost_model.hpp"
#include "planner/evaluation.hpp"
#include "planner/reference_stand_in.hpp"
#include "sim/report.hpp"
#include "topologies/cluster.hpp"
#include "workloads/model.hpp"

namespace hetsim {

[[nodiscard]] const std::vector<std::string>& strategy_names();
[[nodiscard]] std::string strategy_description(const std::string& name);

// Plans `strategy` (one of strategy_names()) and, when it fits in memory, simulates it.
// `global_batch` overrides the model's when positive. Throws InputError on bad combinations
// (a dtype no device supports) and std::invalid_argument for an unknown strategy.
[[nodiscard]] Evaluation evaluate_strategy(const std::string& strategy, const ModelSpec& model, const Cluster& cluster,
                                           const CostModel& cost, const SimOptions& options, long global_batch = 0);

// The upper bound (docs/planner.md): every GPU at the best per-device throughput its own type reaches on a
// homogeneous cluster of that type (its node type's nodes alone, same per-GPU batch), summed.
// The best is over the data-parallel strategies and, with `synthesise`, the planner's own
// program for that homogeneous cluster, and `reference` (another planner's samples/s on it, e.g.
// the hybrid planner's) when given. Notes on how it was obtained are appended to `notes`.
// With `cache` (enabled), each node type's reference is looked up there first, keyed by
// reference_key (`reference_name` names `reference` in it), and stored once computed: the same
// figure and notes, bit for bit.
// A node type of more than `direct_max_gpus` GPUs is not planned on all of them: its
// reference is had on a stand-in (planner/reference_stand_in.hpp): `reference`'s figure there is
// scaled by its weak scaling (its closed form's per-GPU ratio between the two), the data-parallel
// and SPMD figures are not (more copies of the same work per GPU only add synchronisation); the
// best of them is the type's reference, and a note says which it was.
struct PlannerReference {
  double samples_per_s = 0;
  // The closed form's per-GPU throughput of the plan found, copied over `larger` (the same node
  // type, a whole number of times the GPUs), over its own; 0 or empty: none.
  std::function<double(const Cluster& larger)> weak_scaling;
};
using ReferencePlanner = std::function<PlannerReference(const ModelSpec& model, const Cluster& homogeneous)>;
[[nodiscard]] double upper_bound_samples_per_s(const ModelSpec& model, const Cluster& cluster, const CostModel& cost,
                                               const SimOptions& options, std::vector<std::string>& notes,
                                               bool synthesise = false, const ReferencePlanner& reference = nullptr,
                                               const DiskCache* cache = nullptr, const std::string& reference_name = "",
                                               int direct_max_gpus = kReferenceDirectMaxGpus);

// The modelling assumptions behind every report of this model on this cluster (`interference`:
// SimOptions::collective_interference, off under --no-interference).
[[nodiscard]] std::vector<std::string> assumptions(const ModelSpec& model, const Cluster& cluster, const CostModel& cost,
                                                   bool interference = true);

}  // namespace hetsim
