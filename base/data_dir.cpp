// File: base/data_dir.cpp
#include "base/data_dir.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "base/input_error.hpp"
#include "base/text.hpp"

#ifndef HETSIM_SOURCE_DIR
#error "HETSIM_SOURCE_DIR must be defined by the build"
#endif

namespace hetsim {

std::filesystem::path data_root() {
  if (const char* env = std::getenv("HETSIM_DATA_DIR"); env != nullptr && *env != '\0') return env;
  return HETSIM_SOURCE_DIR;
}

std::vector<std::string> shipped_names(std::string_view folder) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(data_root() / folder, ec)) {
    if (entry.path().extension() == ".yaml") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

void check_input_file(const std::filesystem::path& path) {
  std::error_code ec;
  const std::filesystem::file_status st = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(st)) throw InputError(path.string(), "", "no such file");
  if (std::filesystem::is_directory(st)) throw InputError(path.string(), "", "is a directory, not a file");
  if (!std::filesystem::is_regular_file(st)) throw InputError(path.string(), "", "is not a regular file (a pipe or a device)");
}

std::filesystem::path resolve_input(const std::string& arg, std::string_view folder, std::string_view what) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(arg, ec)) return arg;
  if (std::filesystem::exists(arg, ec)) {  // there, but not a file: say what it is
    check_input_file(arg);
  }
  const std::filesystem::path shipped = data_root() / folder / (arg + ".yaml");
  if (std::filesystem::is_regular_file(shipped, ec)) return shipped;
  const std::vector<std::string> known = shipped_names(folder);
  throw InputError(arg, "", "no file and no shipped " + std::string(what) + " named " + in_quotes(arg) +
                                did_you_mean(arg, known) + " (shipped: " + join(known) + ")");
}

std::string slurp(const std::filesystem::path& path) {
  check_input_file(path);  // a FIFO (a study's plan) would block the read forever
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace hetsim
