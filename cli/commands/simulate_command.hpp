// File: cli/commands/simulate_command.hpp
// `hetsim simulate`: one strategy, or a plan written by `hetsim plan --emit-plan`, simulated and
// reported.
#pragma once

#include <string>

#include "cli/common_args.hpp"

namespace hetsim::cli {

struct SimulateArgs {
  CommonArgs common;
  std::string strategy = "dp-proportional";
  std::string plan;
  bool no_upper_bound = false;
};

void add_simulate_options(CLI::App* cmd, SimulateArgs& a);
int run_simulate(const SimulateArgs& a);

}  // namespace hetsim::cli
