// File: cli/input_files.hpp
// Resolves --cluster / --model arguments (a path or a shipped name) and loads them.
#pragma once

#include <functional>
#include <ostream>
#include <string>

#include "topologies/cluster.hpp"
#include "workloads/model.hpp"

namespace hetsim::cli {

inline constexpr const char* kDefaultCluster = "a100-v100-2x2";
inline constexpr const char* kDefaultModel = "gpt3-1.3b";

// `sets`: --set overrides; those of this input (cluster. / model.) are applied before it is read.
[[nodiscard]] Cluster load_cluster_arg(const std::string& arg, const std::vector<FieldOverride>& sets = {});
[[nodiscard]] ModelSpec load_model_arg(const std::string& arg, const std::vector<FieldOverride>& sets = {});
// Writes `text` to `path` and closes it; throws InputError naming the file, the option and the
// system's reason when it cannot be opened, written whole or closed (a full disk, /dev/full).
void write_file(const std::string& path, const std::string& text, const std::string& option);
// The same for what `write` puts on the stream (a file too large to build as one string first).
void write_file_with(const std::string& path, const std::string& option, const std::function<void(std::ostream&)>& write);
// Before a long run: throws InputError, as write_file would at its end, where `path` cannot be
// opened for writing (a read-only folder or file). Leaves an existing file as it was and creates
// none. A device that takes the open and refuses the bytes (/dev/full) shows only when written.
void check_writable(const std::string& path, const std::string& option);
// Throws InputError where `path` is a file this run read through one of its inputs (a cluster's
// switch graph, a sizing's offers): writing it would overwrite an input.
void refuse_overwriting_an_input(const std::string& path, const std::string& option);

}  // namespace hetsim::cli
