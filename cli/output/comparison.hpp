// File: cli/output/comparison.hpp
// hetsim compare's table: two reports side by side (figures, each GPU type's compute,
// communication, idle time and peak memory, and the kinds of task whose time on the critical path
// changed most), printed, and returned as the `differences` JSON of --report.
#pragma once

#include <nlohmann/json.hpp>

namespace hetsim::cli {

// Prints the table for reports `a` and `b` (an infeasible side prints only why) and returns the differences.
nlohmann::json print_comparison(const nlohmann::json& ra, const nlohmann::json& rb);

}  // namespace hetsim::cli
