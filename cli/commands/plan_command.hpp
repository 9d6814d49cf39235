// File: cli/commands/plan_command.hpp
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
  std::string emit;  // "megatron-args": print the chosen hybrid plan as Megatron-LM arguments
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
  bool no_overlap = false;
  bool no_context_parallel = false;
  bool no_moe_parallel = false;
  std::string schedule;  // empty: the planner chooses
};

// The largest cluster `hetsim plan` searches. Measured (gpt3-1.3b, --no-upper-bound, 2-core
// machine, 2026-11-25): 1024 GPUs 9 s, 4096 GPUs 65 s, 8192 GPUs 78 s / 449 MB, 16 384 GPUs
// 149 s / 920 MB (README, "At thousands of GPUs"); beyond, a sweep could not afford it, and the
// candidate simulations meet SimGrid's limits. `hetsim simulate` runs any size.
inline constexpr int kMaxPlanGpus = 16384;

void add_plan_options(CLI::App* cmd, PlanArgs& a);
int run_plan(const PlanArgs& a);

}  // namespace hetsim::cli
