// File: cli/plan_command.hpp
// `hetsim plan` (and bare `hetsim`): synthesise SPMD programs (A* + sharding-ratio LP), judge the
// best candidates in the simulator, compare with the HAP-faithful mode and the data-parallel
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
};

void add_plan_options(CLI::App* cmd, PlanArgs& a);
int run_plan(const PlanArgs& a);

}  // namespace hetsim::cli
