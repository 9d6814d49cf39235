// File: cli/commands/scenario_run.hpp
// One scenario of a study (a sweep's point, a sizing's mix) run inside a worker process: a
// `hetsim plan|simulate` command line run in-process with its output silenced, its outcome as a
// results row (JSON), and the key that identifies its inputs in a results database.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "base/temp_dir.hpp"
#include "studies/sweep/results_db.hpp"
#include "studies/sweep/worker_pool.hpp"

namespace hetsim::cli {

// 128-bit hex digest (two FNV-1a passes) of `text`: a scenario's key in a results database.
[[nodiscard]] std::string digest(const std::string& text);

// Runs `args` (plan or simulate, without --report) in this process, silencing stdout and stderr
// for good (call it in a worker only). Returns a JSON object: status (ok | infeasible | error),
// error, iteration_time_s, samples_per_s, mfu, efficiency, peak_memory_bytes and report (the
// report JSON as text). With `with_plan` (plan only), the report gains `plan`: the text of the plan
// the run chose, as `--emit-plan` writes it (YAML). The report and plan go through files made in
// `scratch` (the caller's private temporary folder, shared by its workers) and removed after.
[[nodiscard]] std::string run_scenario_here(std::vector<std::string> args, const TempDir& scratch, bool with_plan = false);

// Fills `row`'s status, error, figures and report from what a worker returned for it (the JSON
// of run_scenario_here, or how the worker died). Output that is not that JSON (a worker that
// failed before it could write it) is an error row quoting it, never an exception. True where the
// error is a limit of this machine (its memory, ulimit -v, the tasks its memory holds), not of the
// scenario: such a row is not kept, so the scenario runs again on the next resume.
[[nodiscard]] bool fill_row(ScenarioRow& row, const JobOutcome& outcome);

}  // namespace hetsim::cli
