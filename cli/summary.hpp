// File: cli/summary.hpp
// Human-readable terminal output: the strategy comparison table and single-run summaries.
#pragma once

#include <iosfwd>
#include <vector>

#include "sim/report.hpp"
#include "topologies/cluster.hpp"
#include "workloads/model.hpp"

namespace hetsim::cli {

void print_header(std::ostream& out, const ModelSpec& model, const Cluster& cluster, long global_batch);
void print_strategy_table(std::ostream& out, const std::vector<Report>& reports, const Cluster& cluster);
void print_run_summary(std::ostream& out, const Report& report, const Cluster& cluster);
void print_assumptions(std::ostream& out, const std::vector<std::string>& assumptions);

}  // namespace hetsim::cli
