// File: python/python_runs.hpp
// What the Python module's plan() and simulate() return: the report JSON that `hetsim plan
// --report` and `hetsim simulate --report` write, made by the same library calls as
// cli/commands/plan_command.cpp and simulate_command.cpp, printing nothing.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "planner/planner.hpp"
#include "topologies/cluster.hpp"
#include "workloads/model.hpp"

namespace hetsim::python {

// PlanResult::to_json() with the chosen plan's `error_bars` and `mfu_published` (as plan --report),
// plus `chosen` (the chosen plan's strategy name, null when none) and `plan` (the chosen plan as
// --emit-plan writes it, YAML text; null when none). Throws InputError on bad input.
[[nodiscard]] nlohmann::json plan_report(const ModelSpec& model, const Cluster& cluster, const PlannerOptions& options);

// simulate --report's JSON for `strategy` (one of strategy_names()), or for the plan file
// `plan_file` (hetsim plan --emit-plan) where it is not empty. Throws InputError on bad input,
// also for an unknown strategy.
[[nodiscard]] nlohmann::json simulate_report(const ModelSpec& model, const Cluster& cluster, const std::string& strategy,
                                             const std::string& plan_file, bool upper_bound);

}  // namespace hetsim::python
