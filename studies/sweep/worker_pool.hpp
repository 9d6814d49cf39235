// File: studies/sweep/worker_pool.hpp
// Runs jobs in forked worker processes with dynamic load balancing: each worker asks for the
// next job when it finishes one. A job that crashes its worker (a signal, an abort) is reported
// as failed and a fresh worker takes its place; the others go on.
#pragma once

#include <functional>
#include <string>

namespace hetsim {

struct JobOutcome {
  size_t job = 0;
  bool died = false;   // the worker died running it: `output` says how
  std::string output;  // what `work` returned
  double wall_s = 0;
};

// Runs work(0) ... work(jobs - 1) in `workers` processes forked from this one; `done` is called in
// this process, in completion order, as each job ends. `work` runs in the children only.
void run_in_workers(size_t jobs, int workers, const std::function<std::string(size_t job)>& work,
                    const std::function<void(const JobOutcome&)>& done);

}  // namespace hetsim
