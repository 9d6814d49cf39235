// File: cli/output/error_bars.hpp
// Every prediction states how far off hetsim was on the published runs closest to it: the error
// bar of the nearest calibration class (studies/validation/calibration.hpp) for its iteration time
// and its peak memory, from the shipped calibration (studies/validation/calibration.json).
#pragma once

#include <iosfwd>
#include <nlohmann/json.hpp>

#include "sim/report.hpp"
#include "topologies/cluster.hpp"

namespace hetsim::cli {

// {"time": {...}, "memory": {...}}: each the class, its rows, mean and max |error|, and whether it
// matches this run exactly; null members when nothing is calibrated.
[[nodiscard]] nlohmann::json error_bars_json(const Report& report, const Cluster& cluster);
// "prediction error: time ±…, memory ±…" (one line).
void print_error_bars(std::ostream& out, const Report& report, const Cluster& cluster);

}  // namespace hetsim::cli
