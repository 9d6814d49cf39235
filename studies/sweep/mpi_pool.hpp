// File: studies/sweep/mpi_pool.hpp
// A sweep spread over MPI ranks (`mpirun -np N hetsim sweep ...`): rank 0 hands out jobs one at a
// time as ranks ask (dynamic load balancing) and alone calls `done` (it alone writes the
// database); ranks 1..N-1 run them, each job in a forked child (worker_pool.hpp) so a scenario
// that crashes is reported, not fatal to the rank. The MPI calls live in a program of their own,
// hetsim-mpi-relay (mpi_relay.cpp), that each rank's hetsim starts as a child and talks to over
// pipes: SimGrid exports MPI symbols too, so hetsim itself cannot link MPI. Only where an MPI
// library was found at configure time (mpi_built()).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "studies/sweep/worker_pool.hpp"

namespace hetsim {

// True when this process is one of several ranks started by mpirun (read from the launcher's
// environment, before MPI is initialised).
[[nodiscard]] bool mpi_launched();
// True when hetsim was built with MPI (hetsim-mpi-relay exists).
[[nodiscard]] bool mpi_built();

class MpiSession {
 public:
  MpiSession();   // starts the relay (which joins MPI); rank and size from the launcher's environment
  ~MpiSession();  // waits for the relay to leave MPI
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  [[nodiscard]] int rank() const { return rank_; }
  [[nodiscard]] int size() const { return size_; }

  // Rank 0: hands out `job_ids` (whatever identifies a job on every rank) and calls done() as
  // results arrive (JobOutcome::job = index into job_ids). Other ranks: run work(id) until told
  // to stop; `job_ids` and `done` are not used there.
  void run(const std::vector<size_t>& job_ids, const std::function<std::string(size_t id)>& work,
           const std::function<void(const JobOutcome&)>& done) const;

 private:
  int rank_ = 0;
  int size_ = 1;
  int relay_pid_ = -1;
  int to_relay_ = -1;
  int from_relay_ = -1;
};

}  // namespace hetsim
