// File: tests/test_support.hpp
// Paths shared by the tests: the source tree and the built hetsim binary.
#pragma once

#include <filesystem>
#include <string>

namespace hetsim::test {

inline std::filesystem::path source_dir() { return HETSIM_TEST_SOURCE_DIR; }
inline std::filesystem::path shipped(const std::string& folder, const std::string& name) {
  return source_dir() / folder / (name + ".yaml");
}
inline std::string hetsim_binary() { return HETSIM_BINARY; }

}  // namespace hetsim::test
