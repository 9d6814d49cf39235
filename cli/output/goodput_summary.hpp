// File: cli/output/goodput_summary.hpp
// `--reliability` on plan and simulate: the run's expected goodput with failures and checkpoints
// (studies/sizing/goodput.hpp, Llama 3's published failure rate and storage rate, an assumed
// restart), printed after the summary and added to the report JSON as `goodput`.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

#include "sim/report.hpp"
#include "topologies/cluster.hpp"
#include "workloads/model.hpp"

namespace hetsim::cli {

// Prints the goodput block and returns its JSON (an empty object when the run is infeasible).
nlohmann::json print_goodput(std::ostream& out, const Report& report, const ModelSpec& model, const Cluster& cluster);

}  // namespace hetsim::cli
