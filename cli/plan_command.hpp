// File: cli/plan_command.hpp
// `hetsim plan` (and bare `hetsim`): synthesise SPMD programs (A* + sharding-ratio LP) and hybrid
// plans (pipelines of stage meshes), judge the best candidates of each in the simulator, compare
// with the HAP-faithful, HETHUB-faithful and Megatron-uniform modes and the data-parallel
// baselines, and report the chosen plan.
#pragma once

#include <string>

#include "cli/common_args.hpp"

namespace hetsim::cli {

struct PlanArgs {
  CommonArgs common;
  std::string emit_plan;
  int candidates = 3;
  std::string heuristic = "admissible";
  std::string cost = "overlap";
  bool no_lp = false;
  bool no_sfb = false;
  bool no_grouped = false;
  bool no_memory_limit = false;
  bool no_pipeline = false;
  bool no_spmd = false;
  bool no_upper_bound = false;
  bool uniform_layers = false;
  bool no_mixed_stages = false;
  bool no_stage_synthesis = false;
  bool no_cross_mesh = false;
  bool no_sequence_parallel = false;
  bool no_zero1 = false;
  bool no_tp_overlap = false;
  std::string schedule;  // empty: the planner chooses
};

// The largest cluster `hetsim plan` searches. Measured: gpt3-1.3b plans in 97 s on 1024 GPUs; on
// 2048 its best SPMD candidate shards the embedding with all-to-alls of 4.2 M concurrent flows,
// which did not simulate in 10 minutes (README, "At thousands of GPUs").
inline constexpr int kMaxPlanGpus = 16384;

void add_plan_options(CLI::App* cmd, PlanArgs& a);
int run_plan(const PlanArgs& a);

}  // namespace hetsim::cli
