// File: cli/commands/scenario_run.hpp
// One scenario of a study (a sweep's point, a sizing's mix) run inside a worker process: a
// `hetsim plan|simulate` command line run in-process with its output silenced, its outcome as a
// results row (JSON), and the key that identifies its inputs in a results database.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace hetsim::cli {

// 128-bit hex digest (two FNV-1a passes) of `text`: a scenario's key in a results database.
[[nodiscard]] std::string digest(const std::string& text);
// The whole file as bytes ("" when a regular file cannot be read; InputError for a missing path,
// a folder, a FIFO or a device: a FIFO would block the read forever).
[[nodiscard]] std::string slurp(const std::filesystem::path& path);

// Runs `args` (plan or simulate, without --report) in this process, silencing stdout and stderr
// for good (call it in a worker only). Returns a JSON object: status (ok | infeasible | error),
// error, iteration_time_s, samples_per_s, mfu, efficiency, peak_memory_bytes and report (the
// report JSON as text). With `with_plan` (plan only), the report gains `plan`: the text of the plan
// the run chose, as `--emit-plan` writes it (YAML).
[[nodiscard]] std::string run_scenario_here(std::vector<std::string> args, bool with_plan = false);

}  // namespace hetsim::cli
