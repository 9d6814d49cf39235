// File: cli/output/validation_table.hpp
// The pieces of hetsim validate --runs' table: a figure as people read it, an error in percent,
// the whole table as Markdown (with sources), and each run's trace file name.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "studies/validation/run_evaluation.hpp"

namespace hetsim::cli {

// A figure of key `key` (bytes, seconds, GB/s, TFLOP/s, MFU, rates) as people read it.
[[nodiscard]] std::string shown(const std::string& key, double v);
// `x` in percent, one decimal ("+1.2 %" with `sign`).
[[nodiscard]] std::string pct(double x, bool sign);
[[nodiscard]] std::string markdown(const std::vector<RunResult>& results);
[[nodiscard]] std::string trace_file_name(size_t index, const std::string& name);

}  // namespace hetsim::cli
