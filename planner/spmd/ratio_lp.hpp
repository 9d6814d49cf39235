// File: planner/spmd/ratio_lp.hpp
// HAP's sharding-ratio LP: with the program fixed, choose the share r_d of every split dimension
// that each device gets. A program is a sequence of steps; in each, every device's compute and
// communication time is linear in its own share. The LP minimises the sum over steps of the
// slowest device's compute plus the slowest device's communication, with shares summing to 1
// and, unlike HAP, each device's memory (linear in its share) within its capacity.
#pragma once

#include <vector>

#include "planner/spmd/lp_model.hpp"

namespace hetsim {

// coeff * r_device + constant (seconds or bytes)
struct RatioTerm {
  int device = 0;
  double coeff = 0;
  double constant = 0;
};

struct RatioStep {
  std::vector<RatioTerm> compute;  // one per device that computes in this step
  std::vector<RatioTerm> comm;
};

struct RatioProblem {
  int devices = 0;
  std::vector<RatioStep> steps;
  std::vector<RatioTerm> memory;      // bytes held by a device, as a function of its share
  std::vector<double> memory_capacity;  // bytes per device; empty = no memory limit
};

struct RatioSolution {
  LpStatus status = LpStatus::kFailed;
  std::vector<double> ratios;  // sums to 1
  double cost_s = 0;           // the LP objective: sum over steps of max compute + max comm
};

// The LP as a value (columns r_0..r_{n-1}, then C_k and M_k per step).
[[nodiscard]] LpModel build_ratio_lp(const RatioProblem& p);
// Solves the LP. Devices with identical terms in every step (same GPU type, same role) get the
// same share at an optimum (the problem is convex and symmetric in them), so they are solved as
// one class with its multiplicity: the LP shrinks from devices to device classes.
[[nodiscard]] RatioSolution solve_ratios(const RatioProblem& p);

}  // namespace hetsim
