// File: sim/platform_server.cpp
#include "sim/platform_server.hpp"

#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <simgrid/s4u/Engine.hpp>
#include <xbt/log.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iterator>
#include <list>
#include <mutex>
#include <new>
#include <stdexcept>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/fd_io.hpp"
#include "base/input_error.hpp"
#include "base/process_tie.hpp"

namespace hetsim {
namespace {

// Servers kept at once: a plan simulates the cluster and each of its GPU types alone (the upper
// bound), a study a few clusters in turn. Each holds its platform, ~7 kB per GPU (100 000 GPUs:
// 0.74 GB), so the GPUs of the platforms kept are bounded too (a larger one is kept alone).
constexpr size_t kMaxServers = 4;
constexpr size_t kMaxServedGpus = size_t{1} << 17;
constexpr uint64_t kStop = UINT64_MAX;

struct Server {
  Cluster cluster;  // what the server built, compared with each request's
  PlatformJob job = nullptr;
  pid_t pid = -1;
  int fd = -1;  // our end of the socket to it
  uint64_t used = 0;
  bool busy = false;  // a request of one of our threads is in flight: no other may use or stop it
  // Started by a thread other than the main one: it dies with that thread (the parent-death signal
  // follows the forking thread), so it serves that one request and stops.
  bool transient = false;
};

bool on_main_thread() { return ::syscall(SYS_gettid) == ::getpid(); }

std::string death_of(int wstatus) {
  return WIFSIGNALED(wstatus) ? "signal " + std::to_string(WTERMSIG(wstatus)) : "exit status " + std::to_string(WEXITSTATUS(wstatus));
}

void reap(pid_t pid, int* wstatus = nullptr) {
  int s = 0;
  while (::waitpid(pid, &s, 0) < 0 && errno == EINTR) {
  }
  if (wstatus != nullptr) *wstatus = s;
}

// fork() with our buffered output flushed; the child dies with this process and closes `fds[0]`
// (the parent's end of a pipe or socket pair). On failure both ends are closed, errno is fork's.
pid_t fork_tied(const int fds[2]) {
  std::fflush(stdout);  // the child must not flush our buffered output a second time
  std::fflush(stderr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int error = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    errno = error;
  } else if (pid == 0) {
    die_with_parent(parent);
    ::close(fds[0]);
  }
  return pid;
}

// An InputError as bytes, and back: a run's resource limits (address space, memory) and bad
// input found while it runs are the user's to fix, in the fork as in the caller.
std::string encode(const InputError& e) {
  nlohmann::json j = nlohmann::json::array();
  for (const Diagnostic& d : e.diagnostics()) j.push_back({d.file, d.line, d.column, d.field, d.message});
  return nlohmann::json{{"machine_limit", e.machine_limit()}, {"diagnostics", j}}.dump(-1, ' ', false,
                                                                                         nlohmann::json::error_handler_t::replace);
}

InputError decode(std::string_view bytes) {
  std::vector<Diagnostic> ds;
  const nlohmann::json j = nlohmann::json::parse(bytes);
  for (const nlohmann::json& d : j.at("diagnostics")) {
    ds.push_back(Diagnostic{d[0].get<std::string>(), d[1].get<int>(), d[2].get<int>(), d[3].get<std::string>(), d[4].get<std::string>()});
  }
  return InputError::as_reported(std::move(ds)).set_machine_limit(j.at("machine_limit").get<bool>());
}

// Runs `work` in a fork of this process: a status byte (0: done, 1: failed, 2: an InputError,
// encoded) and its bytes, or why the fork died. The fork closes `close_fd` (a socket it must not hold open) if >= 0.
std::string run_in_fork(const std::function<std::string()>& work, int close_fd) {
  int fds[2];
  if (::pipe(fds) != 0) return std::string("\1pipe failed: ") + std::strerror(errno);
  const pid_t pid = fork_tied(fds);
  if (pid < 0) return std::string("\1fork failed: ") + std::strerror(errno);
  if (pid == 0) {
    if (close_fd >= 0) ::close(close_fd);
    // Memory that runs out inside a SimGrid actor cannot be caught there (SimGrid aborts on an
    // exception that leaves an actor): the allocator's new-handler sends the answer, made now,
    // while memory is left, and ends the fork.
    static int answer_fd = -1;
    static const std::string* no_memory = nullptr;
    answer_fd = fds[1];
    no_memory = new std::string("\2" + encode(out_of_memory("the simulation")));
    std::set_new_handler([] {
      const bool sent = write_all(answer_fd, no_memory->data(), no_memory->size());
      ::_exit(sent ? 0 : 3);
    });
    std::string out(1, '\0');
    try {
      out += work();
    } catch (const InputError& e) {
      out = "\2" + encode(e);
    } catch (const std::bad_alloc&) {
      out = "\2" + encode(out_of_memory("the simulation"));
    } catch (const std::exception& e) {
      out = std::string("\1") + e.what();
    } catch (...) {
      out = "\1unknown exception in simulation";
    }
    const bool ok = write_all(fds[1], out.data(), out.size());
    std::fflush(stderr);
    ::_exit(ok ? 0 : 3);
  }
  ::close(fds[1]);
  std::string data;
  char buf[1 << 16];
  for (;;) {
    const ssize_t r = ::read(fds[0], buf, sizeof buf);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    data.append(buf, static_cast<size_t>(r));
  }
  ::close(fds[0]);
  int wstatus = 0;
  reap(pid, &wstatus);
  if (data.empty() || !WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
    // Under an address-space limit, a run killed by SimGrid for a stack or a C allocation that
    // failed ("Failed to allocate stack", "Memory allocation failed") is the limit's doing.
    rlimit limit{};
    if (WIFSIGNALED(wstatus) && WTERMSIG(wstatus) == SIGABRT && ::getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
      return "\2" + encode(InputError("ulimit -v " + std::to_string(limit.rlim_cur / 1024), "",
                                       "the simulation process stopped (signal 6) under the address-space limit, most likely "
                                       "out of memory (its message is above); raise the limit (ulimit -v) or give it a smaller "
                                       "cluster or model"));
    }
    return "\1simulation process died (" + death_of(wstatus) + ")";
  }
  return data;
}

// A SimGrid engine (never destroyed: its process exits without tearing the platform down, which
// took a fifth of a small simulation's fixed cost) and `cluster`'s platform in it.
Platform engine_and_platform(const Cluster& cluster) {
  int argc = 1;
  char name[] = "hetsim";
  char* argv[] = {name, nullptr};
  new simgrid::s4u::Engine(&argc, argv);
  xbt_log_control_set("root.thresh:critical");
  configure_network_model();
  return build_platform(cluster);
}

// A status byte and bytes (run_in_fork) as the caller's result or exception.
std::string result_of(const std::string& reply) {
  if (reply.empty()) throw std::runtime_error("simulation process gave no answer");
  if (reply[0] == 2) throw decode(std::string_view(reply).substr(1));
  if (reply[0] != 0) throw std::runtime_error("simulation failed: " + reply.substr(1));
  return reply.substr(1);
}

// SimGrid's flow-sharing solver recurses once per constraint along a chain of flows that share
// links (lmm::System::update_modified_cnst_set_rec): a ring over 40 000 one-GPU nodes overflowed
// the usual 8 MiB stack (audit, 2026-12-03; 32 769 nodes fitted). The stack of this process's only
// thread grows on demand up to the soft limit, so the limit is raised as far as the hard one allows,
// up to 256 MiB (the 131 072 GPUs hetsim simulates at most need about a quarter of that).
void allow_deep_recursion() {
  constexpr rlim_t kStack = rlim_t{256} << 20;
  rlimit limit{};
  if (::getrlimit(RLIMIT_STACK, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur >= kStack) return;
  limit.rlim_cur = limit.rlim_max == RLIM_INFINITY ? kStack : std::min(kStack, limit.rlim_max);
  (void)::setrlimit(RLIMIT_STACK, &limit);
}

[[noreturn]] void serve(int fd, const Cluster& cluster, PlatformJob job) {
  allow_deep_recursion();
  std::string broken;  // why the platform could not be built: every request's answer
  Platform platform;
  try {
    platform = engine_and_platform(cluster);
  } catch (const InputError& e) {
    broken = "\2" + encode(e);
  } catch (const std::bad_alloc&) {
    broken = "\2" + encode(out_of_memory("the simulation"));
  } catch (const std::exception& e) {
    broken = std::string("\1") + e.what();
  }
  for (;;) {
    uint64_t len = 0;
    if (!read_all(fd, &len, sizeof len) || len == kStop) ::_exit(0);
    std::string request(len, '\0');
    if (!read_all(fd, request.data(), len)) ::_exit(0);
    const std::string reply =
        broken.empty() ? run_in_fork([&] { return job(cluster, platform, request); }, fd) : broken;
    const uint64_t n = reply.size();
    if (!send_all(fd, &n, sizeof n) || !send_all(fd, reply.data(), n)) ::_exit(0);
  }
}

class Registry {
 public:
  ~Registry() {
    if (owner_ == ::getpid()) {
      while (!servers_.empty()) stop(std::prev(servers_.end()));  // none left behind
    }
  }

  // Threads may call it at once: each takes an idle server of the cluster (starting one more when
  // all are busy) and talks to it without the lock.
  std::string run(const Cluster& cluster, PlatformJob job, std::string_view request) {
    std::list<Server>::iterator s;
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      adopt();
      s = server_for(cluster, job);
      s->used = ++clock_;
      s->busy = true;
    }
    const uint64_t len = request.size();
    uint64_t n = 0;
    std::string reply;
    bool ok = send_all(s->fd, &len, sizeof len) && send_all(s->fd, request.data(), request.size()) && read_all(s->fd, &n, sizeof n);
    if (ok) {
      reply.resize(n);
      ok = read_all(s->fd, reply.data(), n);
    }
    const std::lock_guard<std::mutex> lock(mutex_);
    if (!ok || reply.empty()) {
      ::close(s->fd);
      int wstatus = 0;
      reap(s->pid, &wstatus);
      servers_.erase(s);
      throw std::runtime_error("simulation server died (" + death_of(wstatus) + ")");
    }
    s->busy = false;
    if (s->transient) stop(s);
    return result_of(reply);
  }

  // At least `count` servers of `cluster` idle for `job`, started from this (the main) thread so
  // they last: threads that then run at once find one each.
  void prepare(const Cluster& cluster, PlatformJob job, size_t count) {
    const std::lock_guard<std::mutex> lock(mutex_);
    adopt();
    std::vector<std::list<Server>::iterator> taken;
    for (size_t i = 0; i < count; ++i) {
      const auto s = server_for(cluster, job);
      s->busy = true;  // so the next round finds or starts another
      taken.push_back(s);
    }
    for (const auto& s : taken) s->busy = false;
  }

  int started() {
    const std::lock_guard<std::mutex> lock(mutex_);
    return started_;
  }

  void set_limits(size_t servers, size_t gpus) {
    const std::lock_guard<std::mutex> lock(mutex_);
    max_servers_ = servers > 0 ? servers : kMaxServers;
    max_gpus_ = gpus > 0 ? gpus : kMaxServedGpus;
  }

  void stop_all() {
    const std::lock_guard<std::mutex> lock(mutex_);
    adopt();
    while (!servers_.empty()) stop(std::prev(servers_.end()));
  }

 private:
  // In a fork of the owner, the servers (and their sockets) are the owner's: forget them.
  void adopt() {
    const pid_t me = ::getpid();
    if (owner_ == me) return;
    for (Server& s : servers_) ::close(s.fd);
    servers_.clear();
    started_ = 0;
    owner_ = me;
  }

  void stop(std::list<Server>::iterator s) {
    if (!send_all(s->fd, &kStop, sizeof kStop)) ::kill(s->pid, SIGKILL);
    ::close(s->fd);
    reap(s->pid);
    servers_.erase(s);
  }

  std::list<Server>::iterator server_for(const Cluster& cluster, PlatformJob job) {
    for (auto s = servers_.begin(); s != servers_.end(); ++s) {
      if (!s->busy && s->job == job && s->cluster == cluster) return s;
    }
    const auto gpus_held = [&] {
      size_t n = cluster.gpus.size();
      for (const Server& s : servers_) n += s.cluster.gpus.size();
      return n;
    };
    // The least recently used idle servers stop while over the limits (busy ones are kept: the
    // limits hold again once their requests end).
    while (servers_.size() >= max_servers_ || gpus_held() > max_gpus_) {
      auto oldest = servers_.end();
      for (auto s = servers_.begin(); s != servers_.end(); ++s) {
        if (!s->busy && (oldest == servers_.end() || s->used < oldest->used)) oldest = s;
      }
      if (oldest == servers_.end()) break;
      stop(oldest);
    }
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
      throw std::runtime_error(std::string("socketpair failed: ") + std::strerror(errno));
    }
    const pid_t pid = fork_tied(fds);
    if (pid < 0) throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));
    if (pid == 0) {
      for (const Server& other : servers_) ::close(other.fd);  // theirs to end, not ours to hold open
      serve(fds[1], cluster, job);
    }
    ::close(fds[1]);
    servers_.push_back(Server{cluster, job, pid, fds[0], 0, false, !on_main_thread()});
    ++started_;
    return std::prev(servers_.end());
  }

  std::mutex mutex_;
  pid_t owner_ = ::getpid();
  std::list<Server> servers_;  // stable: a thread holds its server across the unlocked request
  uint64_t clock_ = 0;
  int started_ = 0;
  size_t max_servers_ = kMaxServers, max_gpus_ = kMaxServedGpus;
};

Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

std::string run_on_fresh_platform(const Cluster& cluster, const std::function<std::string(const Platform&)>& work) {
  return result_of(run_in_fork([&] { return work(engine_and_platform(cluster)); }, -1));
}

std::string run_on_platform(const Cluster& cluster, PlatformJob job, std::string_view request) {
  return registry().run(cluster, job, request);
}

void prepare_platform_servers(const Cluster& cluster, PlatformJob job, size_t count) {
  if (on_main_thread()) registry().prepare(cluster, job, count);
}

int platform_servers_started() { return registry().started(); }

void stop_platform_servers() { registry().stop_all(); }

void set_platform_server_limits(size_t servers, size_t gpus) { registry().set_limits(servers, gpus); }

}  // namespace hetsim
