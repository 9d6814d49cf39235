// File: tests/test_support.hpp
// What the tests share: paths (the source tree, the built hetsim binary, a private scratch folder),
// hetsim run as a child process, and a few fixtures.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "base/temp_dir.hpp"
#include "kernels_profile/calibration_profile.hpp"
#include "studies/sweep/results_db.hpp"
#include "topologies/cluster.hpp"
#include "workloads/op_graph.hpp"

namespace hetsim::test {

// The operator of `g` called `name`, as a copy (callers may pass a temporary graph); throws if none.
inline Op op_named(const OpGraph& g, const std::string& name) {
  for (const Op& op : g.ops) {
    if (op.name == name) return op;
  }
  throw std::runtime_error("no operator " + name);
}


// Each case {family, block, field}: a small transformer model of that family with `block` on its
// line 9 (before its training block) is refused by load_model, naming `field` and the line.
inline void expect_model_blocks_refused(const std::vector<std::tuple<std::string, std::string, std::string>>& cases) {
  const auto dir = std::filesystem::temp_directory_path() / ("hetsim_model_block_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string head =
      "name: m\nfamily: FAMILY\nlayers: 4\nhidden: 256\nheads: 4\nffn_hidden: 512\nseq_len: 1024\nvocab: 1000\n";
  const std::string training = "training: {global_batch: 8, micro_batch: 1, dtype: bf16}\n";
  for (const auto& [family, block, field] : cases) {
    std::string text = head;
    text.replace(text.find("FAMILY"), 6, family);
    const auto path = dir / "m.yaml";
    std::ofstream(path) << text << block << training;
    try {
      (void)load_model(path);
      ADD_FAILURE() << block << " accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("m.yaml:9"), std::string::npos) << e.what();
    }
  }
  std::filesystem::remove_all(dir);
}

inline std::filesystem::path source_dir() { return HETSIM_TEST_SOURCE_DIR; }
inline std::filesystem::path shipped(const std::string& folder, const std::string& name) {
  return source_dir() / folder / (name + ".yaml");
}
inline std::string hetsim_binary() { return HETSIM_BINARY; }

// A cluster shipped in topologies/, or one of the test clusters in tests/fixtures/clusters/.
inline Cluster shipped_cluster(const std::string& name) { return load_cluster(shipped("topologies", name)); }
inline Cluster fixture_cluster(const std::string& name) {
  return load_cluster(source_dir() / "tests/fixtures/clusters" / (name + ".yaml"));
}

// This test program's private folder (base/temp_dir.hpp: made under $TMPDIR, removed with its
// contents when the program ends), and a path in it.
inline const std::filesystem::path& scratch() {
  static const TempDir dir("test");
  return dir.path();
}
inline std::filesystem::path temp(const std::string& name) { return scratch() / name; }

struct CliRun {
  int rc = -1;
  std::string output;  // the captured stream
};

// Runs a shell command line and captures what reaches its stdout; rc -1 when it could not run or
// did not exit.
inline CliRun run_shell(const std::string& command) {
  FILE* p = popen(command.c_str(), "r");
  CliRun r;
  if (p == nullptr) return r;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) r.output.append(buf, n);
  const int status = pclose(p);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// Runs `hetsim -q ARGS_AND_REDIRECTIONS` through the shell and captures what reaches its stdout.
inline CliRun run_hetsim_redirected(const std::string& args_and_redirections) {
  return run_shell(hetsim_binary() + " -q " + args_and_redirections);
}

// Sets environment variable `name` while it lives (tests run one per process under ctest).
class ScopedEnv {
 public:
  ScopedEnv(std::string name, const std::string& value) : name_(std::move(name)) {
    if (const char* old = std::getenv(name_.c_str())) old_ = old;
    ::setenv(name_.c_str(), value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_.c_str(), old_->c_str(), 1);
    } else {
      ::unsetenv(name_.c_str());
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

enum class Capture { kStdout, kStderr, kBoth };

// Runs `hetsim -q ARGS` and captures one of its streams (the other is discarded), or both in the
// order they were written.
inline CliRun run_hetsim(const std::string& args, Capture capture) {
  const char* redirect = capture == Capture::kStdout ? " 2>/dev/null" : capture == Capture::kStderr ? " 2>&1 >/dev/null" : " 2>&1";
  return run_hetsim_redirected(args + redirect);
}

// `hetsim -q ARGS`: all it printed, and its messages (stderr) alone.
inline CliRun cli(const std::string& args) { return run_hetsim(args, Capture::kBoth); }
inline CliRun cli_messages(const std::string& args) { return run_hetsim(args, Capture::kStderr); }

// Puts the shipped calibration profiles back in force when it goes (tests that apply others).
struct RestoreShippedCalibrations {
  RestoreShippedCalibrations() = default;
  RestoreShippedCalibrations(const RestoreShippedCalibrations&) = delete;
  RestoreShippedCalibrations& operator=(const RestoreShippedCalibrations&) = delete;
  ~RestoreShippedCalibrations() { use_shipped_calibrations(); }
};

// A results database of two ok rows of study "s", one axis (model.training.global_batch: 128,
// 256), samples_per_s 10 and 20: enough for `hetsim report` and its --plot.
inline void write_small_results_db(const std::filesystem::path& path) {
  ResultsDb db(path);
  for (int i = 0; i < 2; ++i) {
    ScenarioRow row;
    row.scenario = "key-" + std::to_string(i);
    row.study = std::string("s");
    row.position = i;
    row.axes = "{\"model.training.global_batch\": " + std::to_string(128 << i) + "}";
    row.status = std::string("ok");
    row.samples_per_s = 10.0 * (i + 1);
    db.put(row);
  }
}

}  // namespace hetsim::test
