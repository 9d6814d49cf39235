// File: cli/commands/scenario_run.hpp
// One scenario of a study (a sweep's point, a sizing's mix) run inside a worker process: a
// `hetsim plan|simulate` command line run in-process with its output silenced, its outcome as a
// results row (JSON; studies/sweep/scenario_rows.hpp reads it).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "base/temp_dir.hpp"

namespace hetsim::cli {

// Runs `args` (plan or simulate, without --report) in this process, silencing stdout and stderr
// for good (call it in a worker only). Returns a JSON object: status (ok | infeasible | error),
// error, iteration_time_s, samples_per_s, mfu, efficiency, peak_memory_bytes and report (the
// report JSON as text). With `with_plan` (plan only), the report gains `plan`: the text of the plan
// the run chose, as `--emit-plan` writes it (YAML). The report and plan go through files made in
// `scratch` (the caller's private temporary folder, shared by its workers) and removed after.
[[nodiscard]] std::string run_scenario_here(std::vector<std::string> args, const TempDir& scratch, bool with_plan = false);

}  // namespace hetsim::cli
