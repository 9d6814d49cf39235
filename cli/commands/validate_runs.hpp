// File: cli/commands/validate_runs.hpp
// `hetsim validate --runs FILE...`: simulates every published run of the files and prints measured,
// predicted and error per figure, the calibration classes, and the mean and max |error| for time
// and for memory; --report writes them (the `classes` are what error bars are read from), --markdown
// the table (run, figure, measured, predicted, error, class, source), --trace-dir each training run's
// simulated iteration as a Chrome trace (DIR/NN-<run>.trace.json).
#pragma once

#include <string>
#include <vector>

namespace hetsim::cli {

int run_validation_runs(const std::vector<std::string>& files, const std::string& only, const std::string& report,
                        const std::string& markdown_file, const std::string& trace_dir = "");

}  // namespace hetsim::cli
