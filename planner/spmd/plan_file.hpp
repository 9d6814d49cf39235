// File: planner/spmd/plan_file.hpp
// The plan format that `hetsim plan --emit-plan` writes and `hetsim simulate --plan` reads: an
// SPMD program (the rule and sufficient-factor choice of every operator, the share of every GPU)
// with the options it was costed under. Doubles are written with 17 significant digits so a plan
// read back gives the same simulated time.
#pragma once

#include <filesystem>
#include <string>

#include "planner/spmd/spmd_planner.hpp"

namespace hetsim {

struct PlanFile {
  std::string model;    // names, for the reader's information and checks
  std::string cluster;
  SearchOptions options;
  SpmdCandidate candidate;
};

[[nodiscard]] std::string plan_to_yaml(const PlanFile& plan, const SpmdProblem& p);
// Reads a plan for problem `p` (the model and cluster it will be simulated on). Throws InputError
// naming file, line and field when it does not fit: other operators, unknown rules, wrong
// number of shares, shares that do not sum to 1.
// `model`, `cluster`: the run's names; a plan written for others is an error (empty: not checked).
[[nodiscard]] PlanFile load_plan(const std::filesystem::path& path, const SpmdProblem& p, const std::string& model = "",
                                 const std::string& cluster = "");

}  // namespace hetsim
