// File: planner/data_parallel.hpp
// The data-parallel baselines: every GPU holds the whole model and a share of the global batch;
// gradients are all-reduced per block as soon as the last micro-batch's backward produced them.
//   dp-even:         every GPU the same share (the remainder to the lowest-numbered GPUs)
//   dp-proportional: shares proportional to each GPU type's speed on this model
// Both check memory: a device that cannot hold its share makes the plan infeasible.
#pragma once

#include <string>
#include <vector>

#include "kernels_profile/cost_model.hpp"
#include "sim/program.hpp"
#include "topologies/cluster.hpp"
#include "workloads/model.hpp"

namespace hetsim {

enum class BatchSplit { kEven, kProportional };

struct DataParallelPlan {
  bool feasible = false;
  std::string infeasible_reason;     // names the device and the shortfall
  std::vector<long> samples;         // per GPU
  std::vector<double> speed_samples_per_s;  // per GPU, compute only (no communication)
  Program program;                   // valid when feasible
};

// A GPU's gradient-accumulation steps before its last are identical and run alone on its compute
// stream (the gradient all-reduces wait for the last): unless `every_step`, they are one task of
// their summed length holding one step's activations, so the program's size does not grow with
// the number of steps (global batch 1e9 simulates as fast as 512); the times are the same.
// GPUs that nothing tells apart (the same type, node health and share) compute in lockstep, so
// unless `every_replica` their compute tasks are written once, mirrored on all of them
// (ComputeTask::mirrors): the program grows with the kinds of GPU, not with the GPUs, apart from
// the collectives' member lists; the times are the same.
[[nodiscard]] DataParallelPlan plan_data_parallel(const ModelSpec& model, const Cluster& cluster, const CostModel& cost,
                                                  BatchSplit split, long global_batch, bool every_step = false,
                                                  bool every_replica = false);

// Splits `total` into integer shares proportional to `weights`: floors first, then one unit at a
// time to the largest remaining deficit (ties to the lower index). Shares sum to `total`.
[[nodiscard]] std::vector<long> split_proportionally(long total, const std::vector<double>& weights);

}  // namespace hetsim
