// File: cli/common_args.hpp
// Options shared by `plan` and `simulate`: inputs, outputs, fidelity, batch and profile overrides.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "sim/executor.hpp"

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
};

void add_common(CLI::App* cmd, CommonArgs& a);
[[nodiscard]] SimOptions sim_options(const CommonArgs& a);
void write_json(const std::string& path, const nlohmann::json& j, const std::string& option);

}  // namespace hetsim::cli
