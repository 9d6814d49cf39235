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
  // The cluster node type of every GPU the shares were planned for, in cluster order (written as runs
  // of one name; empty: not written, as in plans of before 2026-12-07). A cluster whose GPU numbers
  // now lie on other node types (nodes added or removed before them) is refused: the shares would
  // land on other GPUs.
  std::vector<std::string> node_types;
};

[[nodiscard]] std::string plan_to_yaml(const PlanFile& plan, const SpmdProblem& p);
// Reads a plan for problem `p` (the model and cluster it will be simulated on). Throws InputError
// naming file, line and field when it does not fit: other operators, unknown rules, wrong
// number of shares, shares that do not sum to 1.
// `model`, `cluster`: the run's names; a plan written for others is an error (empty: not checked).
// `node_types`: the run's cluster's node type of every GPU; a plan whose own differ is an error
// (empty, or a plan that does not say: not checked).
[[nodiscard]] PlanFile load_plan(const std::filesystem::path& path, const SpmdProblem& p, const std::string& model = "",
                                 const std::string& cluster = "", const std::vector<std::string>& node_types = {});

}  // namespace hetsim
