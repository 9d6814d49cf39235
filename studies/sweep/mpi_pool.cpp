// File: studies/sweep/mpi_pool.cpp
#include "studies/sweep/mpi_pool.hpp"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "base/fd_io.hpp"
#include "base/input_error.hpp"

extern char** environ;

namespace hetsim {

namespace {

constexpr uint64_t kEnd = ~uint64_t{0};

// Whole transfers on the relay's pipes; a relay that is gone is an error of the sweep.
void pipe_in(int fd, void* p, size_t n) {
  if (!read_all(fd, p, n)) throw std::runtime_error("the MPI relay closed its pipe (see its message above)");
}

void pipe_out(int fd, const void* p, size_t n) {
  if (!write_all(fd, p, n)) throw std::runtime_error("the MPI relay closed its pipe (see its message above)");
}

// The first of the launcher's variables that is set (OpenMPI, MPICH/Hydra, PMIx), as a number.
int launcher_value(std::initializer_list<const char*> vars, int fallback) {
  for (const char* var : vars) {
    if (const char* v = std::getenv(var)) return std::atoi(v);
  }
  return fallback;
}

}  // namespace

bool mpi_launched() { return launcher_value({"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"}, 1) > 1; }

bool mpi_built() {
#ifdef HETSIM_MPI_RELAY
  return true;
#else
  return false;
#endif
}

MpiSession::MpiSession() {
#ifdef HETSIM_MPI_RELAY
  rank_ = launcher_value({"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"}, 0);
  size_ = launcher_value({"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"}, 1);
  int to_relay[2], from_relay[2];
  if (::pipe(to_relay) != 0 || ::pipe(from_relay) != 0) throw std::runtime_error("cannot make pipes for the MPI relay");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, to_relay[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, from_relay[1], STDOUT_FILENO);
  for (int fd : {to_relay[0], to_relay[1], from_relay[0], from_relay[1]}) posix_spawn_file_actions_addclose(&actions, fd);
  char path[] = HETSIM_MPI_RELAY;
  char* argv[] = {path, nullptr};
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, path, &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(to_relay[0]);
  ::close(from_relay[1]);
  if (rc != 0) throw std::runtime_error(std::string("cannot start ") + HETSIM_MPI_RELAY);
  relay_pid_ = pid;
  to_relay_ = to_relay[1];
  from_relay_ = from_relay[0];
  ::signal(SIGPIPE, SIG_IGN);  // a relay that dies fails the write instead of killing the sweep
  uint64_t world[2] = {0, 0};  // the relay's rank and world size, as MPI gave them
  pipe_in(from_relay_, world, sizeof world);
  if (world[0] != static_cast<uint64_t>(rank_) || world[1] != static_cast<uint64_t>(size_)) {
    // Launcher variables without the launcher (a copied environment): rank 1 of 2 would wait for
    // a rank 0 that never comes, and a lone rank 0 for workers.
    const std::string said = "rank " + std::to_string(rank_) + " of " + std::to_string(size_);
    ::close(to_relay_);  // the relay, reading its jobs, ends
    ::close(from_relay_);
    int status = 0;
    ::waitpid(relay_pid_, &status, 0);
    throw InputError("the environment", "OMPI_COMM_WORLD_SIZE",
                     "the MPI launcher's variables say " + said + ", but MPI started rank " + std::to_string(world[0]) + " of " +
                         std::to_string(world[1]) + ": run the sweep under mpirun, or unset those variables");
  }
#else
  throw std::logic_error("hetsim was built without MPI");
#endif
}

MpiSession::~MpiSession() {
  if (to_relay_ >= 0) ::close(to_relay_);
  if (from_relay_ >= 0) ::close(from_relay_);
  if (relay_pid_ > 0) {
    int status = 0;
    ::waitpid(relay_pid_, &status, 0);
  }
}

void MpiSession::run(const std::vector<size_t>& job_ids, const std::function<std::string(size_t id)>& work,
                     const std::function<void(const JobOutcome&)>& done) const {
  if (rank_ == 0) {
    const uint64_t count = job_ids.size();
    pipe_out(to_relay_, &count, 8);
    for (size_t id : job_ids) {
      const uint64_t w = id;
      pipe_out(to_relay_, &w, 8);
    }
    for (;;) {
      uint64_t index = 0;
      pipe_in(from_relay_, &index, 8);
      if (index == kEnd) return;
      uint64_t n = 0;
      pipe_in(from_relay_, &n, 8);
      std::string bytes(n, '\0');
      pipe_in(from_relay_, bytes.data(), n);
      const nlohmann::json j = nlohmann::json::parse(bytes);
      JobOutcome o;
      o.job = static_cast<size_t>(index);
      o.died = j.value("died", false);
      o.output = j.value("output", "");
      o.wall_s = j.value("wall_s", 0.0);
      done(o);
    }
  }
  for (;;) {
    uint64_t id = 0;
    pipe_in(from_relay_, &id, 8);
    if (id == kEnd) return;
    JobOutcome outcome;  // one forked child per job: a crashing scenario is an outcome, not the end of this rank
    run_in_workers(1, 1, [&](size_t) { return work(static_cast<size_t>(id)); }, [&](const JobOutcome& o) { outcome = o; });
    const std::string msg = nlohmann::json{{"died", outcome.died}, {"output", outcome.output}, {"wall_s", outcome.wall_s}}.dump(
        -1, ' ', false, nlohmann::json::error_handler_t::replace);  // an output that is not UTF-8 still arrives
    const uint64_t n = msg.size();
    pipe_out(to_relay_, &n, 8);
    pipe_out(to_relay_, msg.data(), msg.size());
  }
}

}  // namespace hetsim
