// File: cli/commands/validate_command.hpp
// `hetsim validate`: how well the compute cost model matches measurements — kernel tables
// (fitted curves, leave-one-out interpolation) and whole transformer layers — as an error table
// against the accuracy targets; with --runs, published runs of any kind (cli/validate_runs.hpp).
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace hetsim::cli {

struct ValidateArgs {
  std::string kernels;  // directory of kernel tables; default kernels_profile/measured
  std::string layers;   // hetsim-layer-bench CSV; default kernels_profile/measured/layers/*.csv
  std::string layer_kernels;  // layer-kernels CSV; default kernels_profile/measured/layer-kernels/*.csv
  std::string report;
  std::vector<std::string> runs;  // validation run files: compare published runs instead
  std::string only;               // with runs: only runs whose name contains this
  std::string markdown;           // with runs: the table as Markdown
  std::string trace_dir;          // with runs: one Chrome trace per training run
  std::string calibration = "shipped";  // with runs: the calibration profile in force
};

void add_validate_options(CLI::App* cmd, ValidateArgs& a);
int run_validate(const ValidateArgs& a);

}  // namespace hetsim::cli
