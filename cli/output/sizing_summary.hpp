// File: cli/output/sizing_summary.hpp
// hetsim size's terminal summary (the Pareto front with each mix's error bar, what was planned, the
// estimates used to choose) and the table its plot draws.
#pragma once

#include <string>

#include "studies/sizing/sizing.hpp"
#include "workloads/model.hpp"

namespace hetsim::cli {

// `db`: where the plans are kept.
void print_sizing_front(const Sizing& s, const ModelSpec& model, const SizingRun& run, const std::string& db);
// Every feasible mix as CSV (label, cost, time to train in days, on the front, the time error bar as a share).
[[nodiscard]] std::string sizing_plot_table(const Sizing& s, const SizingRun& run);

}  // namespace hetsim::cli
