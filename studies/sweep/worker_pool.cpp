// File: studies/sweep/worker_pool.cpp
#include "studies/sweep/worker_pool.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "base/fd_io.hpp"

namespace hetsim {
namespace {

constexpr uint64_t kStop = UINT64_MAX;

struct Worker {
  pid_t pid = -1;
  int to = -1;     // jobs to the worker
  int from = -1;   // results from it
  int64_t job = -1;  // running, or -1
  std::chrono::steady_clock::time_point started;
};

[[noreturn]] void worker_loop(int in, int out, const std::function<std::string(size_t)>& work) {
  for (;;) {
    uint64_t job = 0;
    if (!read_all(in, &job, sizeof job) || job == kStop) ::_exit(0);
    const auto t0 = std::chrono::steady_clock::now();
    std::string result;
    try {
      result = work(static_cast<size_t>(job));
    } catch (const std::exception& e) {
      result = std::string("internal error: ") + e.what();
    }
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const uint64_t len = result.size();
    if (!write_all(out, &job, sizeof job) || !write_all(out, &len, sizeof len) || !write_all(out, result.data(), result.size()) ||
        !write_all(out, &wall, sizeof wall)) {
      ::_exit(3);
    }
  }
}

Worker spawn(const std::function<std::string(size_t)>& work, const std::vector<Worker>& others) {
  int down[2], up[2];
  if (::pipe(down) != 0 || ::pipe(up) != 0) throw std::runtime_error(std::string("pipe failed: ") + std::strerror(errno));
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));
  if (pid == 0) {
    ::close(down[1]);
    ::close(up[0]);
    for (const Worker& w : others) {  // the siblings' pipes belong to the parent
      if (w.to >= 0) ::close(w.to);
      if (w.from >= 0) ::close(w.from);
    }
    worker_loop(down[0], up[1], work);
  }
  ::close(down[0]);
  ::close(up[1]);
  Worker w;
  w.pid = pid;
  w.to = down[1];
  w.from = up[0];
  return w;
}

std::string death(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) return "the worker died of signal " + std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) + ")";
  return "the worker exited with status " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

}  // namespace

void run_in_workers(size_t jobs, int workers, const std::function<std::string(size_t)>& work,
                    const std::function<void(const JobOutcome&)>& done) {
  if (jobs == 0) return;
  // A worker that died leaves a closed pipe: writing to it must fail, not kill this process.
  struct sigaction ignore {}, saved {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  ::sigaction(SIGPIPE, &ignore, &saved);
  const size_t n = std::min<size_t>(static_cast<size_t>(std::max(1, workers)), jobs);
  std::vector<Worker> pool;
  size_t next = 0;
  auto assign = [&](Worker& w) {
    if (next >= jobs) {
      const uint64_t stop = kStop;
      (void)write_all(w.to, &stop, sizeof stop);
      w.job = -1;
      return;
    }
    const uint64_t job = next++;
    w.job = static_cast<int64_t>(job);
    w.started = std::chrono::steady_clock::now();
    if (!write_all(w.to, &job, sizeof job)) w.job = static_cast<int64_t>(job);  // it died: found when its pipe ends
  };
  for (size_t i = 0; i < n; ++i) {
    pool.push_back(spawn(work, pool));
    assign(pool.back());
  }
  size_t finished = 0;
  while (finished < jobs) {
    std::vector<pollfd> fds;
    std::vector<size_t> which;
    for (size_t i = 0; i < pool.size(); ++i) {
      if (pool[i].job >= 0) {
        fds.push_back({pool[i].from, POLLIN, 0});
        which.push_back(i);
      }
    }
    if (fds.empty()) throw std::logic_error("worker pool: jobs left but no worker running one");
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(std::string("poll failed: ") + std::strerror(errno));
    }
    for (size_t k = 0; k < fds.size(); ++k) {
      if (fds[k].revents == 0) continue;
      Worker& w = pool[which[k]];
      JobOutcome o;
      uint64_t job = 0, len = 0;
      if (read_all(w.from, &job, sizeof job) && read_all(w.from, &len, sizeof len) && len < (uint64_t{1} << 34)) {
        o.output.resize(len);
        if (read_all(w.from, o.output.data(), len) && read_all(w.from, &o.wall_s, sizeof o.wall_s)) {
          o.job = static_cast<size_t>(job);
          done(o);
          ++finished;
          assign(w);
          continue;
        }
      }
      // The pipe ended early: the worker died running its job. Replace it.
      o.job = static_cast<size_t>(w.job);
      o.died = true;
      ::close(w.to);
      ::close(w.from);
      w.to = w.from = -1;
      o.output = death(w.pid);
      o.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - w.started).count();
      done(o);
      ++finished;
      w = spawn(work, pool);
      assign(w);
    }
  }
  for (Worker& w : pool) {
    ::close(w.to);
    ::close(w.from);
    int status = 0;
    while (::waitpid(w.pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  ::sigaction(SIGPIPE, &saved, nullptr);
}

}  // namespace hetsim
