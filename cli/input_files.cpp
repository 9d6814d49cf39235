// File: cli/input_files.cpp
#include "cli/input_files.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "base/data_dir.hpp"
#include "base/input_error.hpp"

namespace hetsim::cli {

namespace {

// `path` cannot be written, with the system's reason (`err`, errno; 0: none known).
InputError cannot_write(const std::string& path, const std::string& option, int err) {
  return InputError(path, option, std::string("cannot write this file") + (err != 0 ? std::string(": ") + std::strerror(err) : ""));
}

}  // namespace

Cluster load_cluster_arg(const std::string& arg, const std::vector<FieldOverride>& sets) {
  return load_cluster(resolve_input(arg, "topologies", "cluster"), overrides_for(sets, "cluster"));
}

ModelSpec load_model_arg(const std::string& arg, const std::vector<FieldOverride>& sets) {
  return load_model(resolve_input(arg, "workloads", "model"), overrides_for(sets, "model"));
}

void write_file(const std::string& path, const std::string& text, const std::string& option) {
  write_file_with(path, option, [&](std::ostream& out) { out << text; });
}

void refuse_overwriting_an_input(const std::string& path, const std::string& option) {
  if (const std::string read = input_read_as(path); !read.empty()) {  // (direct inputs are refused before the run)
    throw InputError(path, option, "is " + read + ", a file this run read as an input; it would be overwritten");
  }
}

void write_file_with(const std::string& path, const std::string& option, const std::function<void(std::ostream&)>& write) {
  refuse_overwriting_an_input(path, option);
  errno = 0;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (out) write(out);
  if (out) out.close();  // the last block reaches the file here: a full disk shows now or never
  if (!out) throw cannot_write(path, option, errno);
}

void check_writable(const std::string& path, const std::string& option) {
  refuse_overwriting_an_input(path, option);
  std::error_code ec;
  const bool existed = std::filesystem::exists(std::filesystem::symlink_status(path, ec));  // a dangling link too: never removed
  errno = 0;
  bool opened = false;
  {
    std::ofstream probe(path, std::ios::binary | std::ios::app);  // appends nothing: an existing file keeps its bytes
    opened = static_cast<bool>(probe);
  }
  const int err = errno;
  if (!existed) std::filesystem::remove(path, ec);
  if (!opened) throw cannot_write(path, option, err);
}

}  // namespace hetsim::cli
