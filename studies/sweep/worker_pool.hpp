// File: studies/sweep/worker_pool.hpp
// Runs jobs in forked worker processes with dynamic load balancing: each worker asks for the
// next job when it finishes one. A job that crashes its worker (a signal, an abort) is reported
// as failed and a fresh worker takes its place; the others go on. Workers die with this process
// (SIGKILL included); SIGINT or SIGTERM stops the pool cleanly (see Interrupted).
#pragma once

#include <exception>
#include <functional>
#include <string>

namespace hetsim {

struct JobOutcome {
  size_t job = 0;
  bool died = false;   // the worker died running it: `output` says how
  std::string output;  // what `work` returned
  double wall_s = 0;
};

// Thrown by run_in_workers when SIGINT or SIGTERM reached this process while it ran: every worker
// has been stopped (SIGTERM) and reaped, the jobs they were running are lost, and every job that
// finished before was handed to `done` (a results database holds exactly those rows).
class Interrupted : public std::exception {
 public:
  explicit Interrupted(int signal) : signal_(signal) {}
  [[nodiscard]] int signal() const { return signal_; }
  [[nodiscard]] const char* what() const noexcept override { return "interrupted"; }

 private:
  int signal_;
};

// Runs work(0) ... work(jobs - 1) in `workers` processes forked from this one; `done` is called in
// this process, in completion order, as each job ends. `work` runs in the children only. Throws
// Interrupted after SIGINT or SIGTERM (handled here while it runs, as they were before after).
void run_in_workers(size_t jobs, int workers, const std::function<std::string(size_t job)>& work,
                    const std::function<void(const JobOutcome&)>& done);

}  // namespace hetsim
