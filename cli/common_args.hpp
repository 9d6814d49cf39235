// File: cli/common_args.hpp
// Options shared by `plan` and `simulate`: inputs, outputs, fidelity, batch and profile overrides.
#pragma once

#include <climits>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "kernels_profile/cost_model.hpp"
#include "sim/executor.hpp"
#include "topologies/cluster.hpp"
#include "workloads/model.hpp"

namespace CLI {
class App;
}

namespace hetsim::cli {

struct CommonArgs {
  std::string cluster;
  std::string model;
  std::string report;
  std::string trace;
  std::string fidelity = "phase";
  std::string layer_profile;
  long global_batch = 0;
  long micro_batch = 0;
  std::string precision;  // --precision: training.gemm_precision edited (empty: the model's)
  std::vector<std::string> sets;  // --set PATH=VALUE, in order
  bool every_step = false;        // --every-step (SimOptions::every_step)
  bool every_collective = false;  // --every-collective (SimOptions::every_collective)
  bool no_interference = false;   // --no-interference (SimOptions::collective_interference)
  bool reliability = false;       // --reliability: the goodput with failures and checkpoints
  bool every_replica = false;     // --every-replica (SimOptions::every_replica)
  std::string calibration = "shipped";  // --calibration: shipped | none | a profile file
};

void add_common(CLI::App* cmd, CommonArgs& a);
// --calibration PROFILE (kernels_profile/calibration_profile.hpp), for every command that predicts.
void add_calibration_option(CLI::App* cmd, std::string& into);

// The model (with the batch overrides applied and experts sized for the cluster), the cluster,
// the cost model and the simulation options these arguments name.
struct Inputs {
  ModelSpec model;
  Cluster cluster;
  CostModel cost;
  SimOptions sim;
};
[[nodiscard]] Inputs load_inputs(const CommonArgs& a);
// The files a run writes (option, path; empty paths skipped) are distinct from each other and from
// the files it reads (the cluster, model and layer profile `a` names, and `more_inputs`: what,
// path): a
// --report given the model's own file overwrote it. Files under /dev are the caller's streams.
void check_outputs_apart(const CommonArgs& a, const std::vector<std::pair<std::string, std::string>>& outputs,
                         const std::vector<std::pair<std::string, std::string>>& more_inputs = {});
// The same for any command: `outputs` (option, path) against each other and `inputs` (what, path).
void check_paths_apart(const std::vector<std::pair<std::string, std::string>>& outputs,
                       const std::vector<std::pair<std::string, std::string>>& inputs);
// --calibration's argument as an input file (what, path): none for "none" and "shipped".
[[nodiscard]] std::vector<std::pair<std::string, std::string>> calibration_input(const std::string& arg);
[[nodiscard]] SimOptions sim_options(const CommonArgs& a);
void write_json(const std::string& path, const nlohmann::json& j, const std::string& option);

// A whole number of at least `min`, with a short message (CLI11's own PositiveNumber quotes the
// largest double in full).
[[nodiscard]] CLI::Validator at_least(long min, long max = LONG_MAX);
// A real number in [min, max]: finite (CLI::Range lets "nan" through, every comparison with it false).
[[nodiscard]] CLI::Validator finite_range(double min, double max);
// A file the run will write: its folder exists, and the path is not a folder, pipe or device
// (checked before the run, so a bad path neither hangs it nor costs it its results).
[[nodiscard]] CLI::Validator output_file();

}  // namespace hetsim::cli
