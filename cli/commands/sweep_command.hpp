// File: cli/commands/sweep_command.hpp
// `hetsim sweep STUDY.yaml`: every scenario of a study (studies/sweep/), run in worker processes,
// each result committed to the study's SQLite database as it ends; finished scenarios are never
// run again.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace hetsim::cli {

struct SweepArgs {
  std::string study;
  std::string db;  // default: the study file with .db
  int jobs = 1;
  bool retry_errors = false;
  bool dry_run = false;  // check the study whole and list its scenarios; run nothing, write nothing
};

void add_sweep_options(CLI::App* cmd, SweepArgs& a);
int run_sweep(const SweepArgs& a);

}  // namespace hetsim::cli
