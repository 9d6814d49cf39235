// File: tests/cli/scratch_dir.hpp
// A private folder for a CLI test's input and output files (base/temp_dir.hpp underneath: made
// with mkdtemp, removed with its contents when the test ends), and files written in it by name.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

#include "base/temp_dir.hpp"

namespace hetsim::test {

struct ScratchDir {
  TempDir dir{"cli-test"};
  std::filesystem::path path = dir.path();
  // Writes `text` to PATH/name (replacing it) and returns that path.
  [[nodiscard]] std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path / name) << text;
    return (path / name).string();
  }
};

}  // namespace hetsim::test
