// File: studies/sweep/worker_pool.cpp
#include "studies/sweep/worker_pool.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "base/fd_io.hpp"
#include "base/process_tie.hpp"

namespace hetsim {
namespace {

constexpr uint64_t kStop = UINT64_MAX;

volatile std::sig_atomic_t g_stop_signal = 0;  // set by the handler below, read by the pool's loop
void on_stop_signal(int sig) { g_stop_signal = sig; }

// SIGINT and SIGTERM handled while the pool runs, and blocked except inside the wait (ppoll), so
// one that arrives is seen there at once and never in the middle of recording a result. The
// previous handlers and mask are back when the pool ends.
class StopSignals {
 public:
  StopSignals() {
    g_stop_signal = 0;
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGINT, &sa, &saved_[0]);
    ::sigaction(SIGTERM, &sa, &saved_[1]);
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    ::sigprocmask(SIG_BLOCK, &stop, &mask_);
    waiting_ = mask_;
    sigdelset(&waiting_, SIGINT);
    sigdelset(&waiting_, SIGTERM);
  }
  ~StopSignals() {
    ::sigprocmask(SIG_SETMASK, &mask_, nullptr);
    ::sigaction(SIGINT, &saved_[0], nullptr);
    ::sigaction(SIGTERM, &saved_[1], nullptr);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
  // The mask to wait under: the stop signals let through.
  [[nodiscard]] const sigset_t* waiting() const { return &waiting_; }
  // In a worker: the default actions and the caller's mask again (a stopped pool's workers end at once).
  void reset_in_child() const {
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    ::sigprocmask(SIG_SETMASK, &mask_, nullptr);
  }

 private:
  struct sigaction saved_[2] {};
  sigset_t mask_{}, waiting_{};
};

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

Worker spawn(const std::function<std::string(size_t)>& work, const std::vector<Worker>& others, const StopSignals& signals) {
  int down[2], up[2];
  if (::pipe(down) != 0 || ::pipe(up) != 0) throw std::runtime_error(std::string("pipe failed: ") + std::strerror(errno));
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));
  if (pid == 0) {
    die_with_parent(parent);  // never a worker running on under PID 1
    signals.reset_in_child();
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

// Stops every worker (SIGTERM, then waits for it): the pool was interrupted.
void stop_all(std::vector<Worker>& pool) {
  for (Worker& w : pool) {
    if (w.pid > 0) ::kill(w.pid, SIGTERM);
  }
  for (Worker& w : pool) {
    if (w.to >= 0) ::close(w.to);
    if (w.from >= 0) ::close(w.from);
    int status = 0;
    while (w.pid > 0 && ::waitpid(w.pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
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
  const StopSignals stop_signals;
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
    pool.push_back(spawn(work, pool, stop_signals));
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
    const int ready = g_stop_signal != 0 ? -1 : ::ppoll(fds.data(), fds.size(), nullptr, stop_signals.waiting());
    if (g_stop_signal != 0) {  // checked before any outcome: a worker killed by the same Ctrl-C is no error row
      const int sig = g_stop_signal;
      stop_all(pool);
      ::sigaction(SIGPIPE, &saved, nullptr);
      throw Interrupted(sig);
    }
    if (ready < 0) {
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
      w = spawn(work, pool, stop_signals);
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
