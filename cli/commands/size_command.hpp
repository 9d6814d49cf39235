// File: cli/commands/size_command.hpp
// `hetsim size SIZING.yaml`: which cluster to buy or rent for a model. Enumerates the mixes of
// offered nodes within the budget, prunes them by a fast estimate (studies/sizing/estimate.hpp),
// plans and simulates the promising ones in worker processes (each result kept in a SQLite
// database, so an interrupted sizing resumes), and reports the Pareto front of time to train
// against cost.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace hetsim::cli {

struct SizeArgs {
  std::string sizing;
  std::string db;      // default: the sizing file with .db
  std::string report;  // JSON
  std::string plot;    // PNG of the front
  std::string emit;    // a folder for each front point's cluster and plan
  int jobs = 1;
  int max_plans = 16;
  double tolerance = 0.25;
  bool retry_errors = false;
  bool dry_run = false;  // check the sizing and its offers, count the mixes; plan nothing, write nothing
};

void add_size_options(CLI::App* cmd, SizeArgs& a);
int run_size(const SizeArgs& a);

}  // namespace hetsim::cli
