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
  std::string moe_dispatcher;  // empty: the planner chooses
  std::string keep_plan;       // a plan simulated beside the candidates (what-if sweeps: the baseline's)
};

void add_plan_options(CLI::App* cmd, PlanArgs& a);
int run_plan(const PlanArgs& a);

}  // namespace hetsim::cli
