// File: planner/spmd/spmd_planner.hpp
// HAP's alternation: search the best program for the current sharding ratios (A*), then the best
// ratios for that program (LP), until the program's cost stops improving. Programs and the ratios
// they were costed with are kept together; every round is recorded as a candidate.
#pragma once

#include <vector>

#include "planner/spmd/ratio_lp.hpp"
#include "planner/spmd/spmd_search.hpp"

namespace hetsim {

struct SpmdPlanOptions {
  SearchOptions search;
  bool lp = true;  // false: shares stay proportional to device speed
  int max_rounds = 6;
  friend bool operator==(const SpmdPlanOptions&, const SpmdPlanOptions&) = default;
};

struct SpmdCandidate {
  SpmdProgram program;
  std::vector<double> ratios;
  double estimate_s = 0;  // the planner's cost of this program at these ratios
};

struct SpmdPlan {
  bool found = false;
  SpmdCandidate best;
  std::vector<SpmdCandidate> candidates;  // every distinct (program, ratios) the rounds produced
  SearchStats search;                     // summed over rounds
  double lp_seconds = 0;
  int rounds = 0;
};

[[nodiscard]] SpmdPlan plan_spmd(const SpmdProblem& p, const SpmdPlanOptions& options);

// The ratio LP of a fixed program (linear in each device's share).
[[nodiscard]] RatioProblem ratio_problem(const SpmdProblem& p, const SpmdProgram& program, const std::vector<double>& ratios,
                                         const SearchOptions& options);

// Shares rounded to whole samples of the iteration's batch: floors first, then one sample at a
// time to the largest remaining deficit (HAP's rounding).
[[nodiscard]] std::vector<double> round_to_samples(const std::vector<double>& ratios, long samples);

// Layout of every operator's output under `program`.
[[nodiscard]] std::vector<Layout> output_layouts(const SpmdProblem& p, const SpmdProgram& program);

}  // namespace hetsim
