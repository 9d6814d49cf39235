// File: tests/fuzz/fuzz_input.hpp
// What every fuzz target shares: the input written to a file of this process's own (the loaders
// take paths), and the rule that InputError is the expected outcome for bad input while any other
// exception is a finding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace hetsim::fuzz {

// The source tree (shipped clusters, models and devices are found there as in the tests).
[[nodiscard]] std::filesystem::path source_dir();

// A folder of this process's own: $TMPDIR/hetsim-fuzz-PID, or /dev/shm/... when TMPDIR is unset
// (libFuzzer's -fork and -jobs children each get theirs). Removed at a normal exit.
[[nodiscard]] const std::filesystem::path& work_dir();

// Symbolic links in work_dir() to files or folders of the source tree, so that the relative paths
// in seeds (a run file's "clusters/x.yaml", a sizing file's "offers.yaml") resolve as they do next
// to the shipped files. `links`: (name in work_dir, path relative to source_dir). Idempotent.
void link_neighbours(const std::vector<std::pair<std::string, std::string>>& links);

// Writes the fuzz input to work_dir()/name (replacing it) and returns that path.
[[nodiscard]] std::filesystem::path write_input(const uint8_t* data, size_t size, const std::string& name);

// Prints an unexpected exception (its dynamic type and what()) to stderr and aborts, which
// libFuzzer reports as a crash with the input saved as the reproducer.
[[noreturn]] void unexpected_exception(const char* loader);

// Runs `load`: returning or throwing InputError is fine; anything else is a finding. With
// HETSIM_FUZZ_VERBOSE=1 in the environment the InputError's message is printed (why a seed is refused).
template <class F>
void expect_only_input_errors(const char* loader, F&& load);

// Prints an expected InputError when HETSIM_FUZZ_VERBOSE is set.
void note_input_error(const std::exception& e);

}  // namespace hetsim::fuzz

#include "base/input_error.hpp"

template <class F>
void hetsim::fuzz::expect_only_input_errors(const char* loader, F&& load) {
  try {
    std::forward<F>(load)();
  } catch (const InputError& e) {
    note_input_error(e);  // the expected outcome for bad input
  } catch (...) {
    unexpected_exception(loader);
  }
}
