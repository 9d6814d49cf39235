// File: cli/input_files.hpp
// Resolves --cluster / --model arguments (a path or a shipped name) and loads them.
#pragma once

#include <string>

#include "topologies/cluster.hpp"
#include "workloads/model.hpp"

namespace hetsim::cli {

inline constexpr const char* kDefaultCluster = "a100-v100-2x2";
inline constexpr const char* kDefaultModel = "gpt3-1.3b";

// `sets`: --set overrides; those of this input (cluster. / model.) are applied before it is read.
[[nodiscard]] Cluster load_cluster_arg(const std::string& arg, const std::vector<FieldOverride>& sets = {});
[[nodiscard]] ModelSpec load_model_arg(const std::string& arg, const std::vector<FieldOverride>& sets = {});
// Writes `text` to `path`; throws InputError naming the option when the file cannot be written.
void write_file(const std::string& path, const std::string& text, const std::string& option);

}  // namespace hetsim::cli
