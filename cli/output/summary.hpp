// File: cli/output/summary.hpp
// Human-readable terminal output: the strategy comparison table and single-run summaries.
#pragma once

#include <iosfwd>
#include <vector>

#include "planner/hybrid/hybrid_plan.hpp"
#include "planner/hybrid/megatron_args.hpp"
#include "planner/planner.hpp"
#include "planner/spmd/spmd_planner.hpp"
#include "sim/report.hpp"
#include "topologies/cluster.hpp"
#include "workloads/model.hpp"

namespace hetsim::cli {

void print_header(std::ostream& out, const ModelSpec& model, const Cluster& cluster, long global_batch, long micro_batch);
void print_strategy_table(std::ostream& out, const std::vector<Report>& reports, const Cluster& cluster);
void print_run_summary(std::ostream& out, const Report& report, const Cluster& cluster);
void print_assumptions(std::ostream& out, const std::vector<std::string>& assumptions);
// The synthesised program: shares per GPU type, shardings grouped by layer, collectives.
void print_spmd_plan(std::ostream& out, const SpmdProblem& p, const SpmdCandidate& c, const Cluster& cluster);
// A hybrid plan: its shape, then every stage of each distinct pipeline (GPUs, type, tp, layers).
void print_hybrid_plan(std::ostream& out, const HybridPlan& plan, const Cluster& cluster);
void print_search_stats(std::ostream& out, const SpmdPlan& plan, double plan_time_s, const std::string& heuristic);
// What a plan run chose (r.chosen() set): the chosen row, its plan, the searches' figures and the kept plan's outcome.
void print_plan_choice(std::ostream& out, const PlanResult& r, const Cluster& cluster);
// `plan --emit megatron-args`: the arguments that run the chosen plan, or why there are none.
void print_megatron_args(std::ostream& out, const MegatronArgs& exported);

}  // namespace hetsim::cli
