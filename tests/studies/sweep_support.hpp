// File: tests/studies/sweep_support.hpp
// What the sweep tests share: their private scratch folder, study files written into it, and
// `hetsim sweep` started as a child process (to wait for, or to kill).
#pragma once

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "test_support.hpp"

extern char** environ;

namespace hetsim::test {

// A study file in the test program's private folder (test::scratch()), where the sweeps these
// tests start keep their scratch too (TMPDIR): a sweep killed with SIGKILL leaves nothing behind.
inline std::filesystem::path write_study(const std::string& name, const std::string& text) {
  const auto p = temp(name + ".yaml");
  std::ofstream(p) << text;
  return p;
}

inline std::string cache_dir() { return (scratch() / "cache").string(); }

// `hetsim sweep` as a child process (its pid, to kill it).
inline pid_t start_sweep(const std::vector<std::string>& args) {
  std::vector<std::string> all{test::hetsim_binary(), "-q", "sweep"};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  // The sweeps keep the upper bounds' cache on, as a user's do, in the tests' folder: scenarios
  // that share a homogeneous reference (and the sweeps of one test, which run the same study)
  // simulate it once, and a row read from the cache must equal one that simulated it.
  std::vector<std::string> env{"TMPDIR=" + scratch().string(), "HETSIM_CACHE_DIR=" + cache_dir()};
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view v(*e);
    if (!v.starts_with("TMPDIR=") && !v.starts_with("HETSIM_CACHE_DIR=")) env.emplace_back(*e);
  }
  std::vector<char*> envp;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = -1;
  EXPECT_EQ(posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), envp.data()), 0);
  posix_spawn_file_actions_destroy(&fa);
  return pid;
}

inline int wait_for(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace hetsim::test
