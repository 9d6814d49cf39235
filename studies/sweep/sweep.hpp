// File: studies/sweep/sweep.hpp
// A sweep (docs/what-if.md): every scenario of a study run in worker processes (or over mpirun's
// ranks), each result committed to the study's SQLite database as it ends; finished scenarios are
// never run again. The facade `hetsim sweep` calls.
#pragma once

#include <filesystem>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "base/temp_dir.hpp"

namespace hetsim {

// How a sweep runs a scenario. A study's scenarios are command lines of `hetsim plan|simulate`
// (docs/formats/study.md: its flags are that command's switches), so the program that reads them
// says how: the CLI runs them in-process (cli/commands/scenario_run.hpp).
struct ScenarioRunner {
  // The version and build of the program that runs them ("0.1.0+COMMIT build HEX"): part of every
  // scenario's key, so that other code runs them again.
  std::string version;
  // Throws InputError where `args` is not a valid command line (checked before anything runs).
  std::function<void(const std::vector<std::string>& args)> check;
  // Runs `args` in this (worker) process; returns the row JSON that fill_row reads
  // (studies/sweep/scenario_rows.hpp). `with_plan`: the report also holds the chosen plan (`plan`).
  std::function<std::string(const std::vector<std::string>& args, const TempDir& scratch, bool with_plan)> run;
};

struct SweepOptions {
  std::filesystem::path db;   // empty: the study file with .db
  int jobs = 1;               // worker processes (ignored under mpirun: its ranks)
  bool retry_errors = false;  // run again the scenarios recorded as errors
  bool dry_run = false;       // check the study whole and say what would run; run nothing, write nothing
};

struct SweepOutcome {
  std::string study;
  size_t scenarios = 0;  // in the study
  size_t already = 0;    // found in the database, not run again
  size_t ok = 0, infeasible = 0, errors = 0;  // of those run now
  std::filesystem::path db;  // empty after a dry run
};

// Checks the study whole (load_study; every axis's path and values against the study's cluster and
// model; every flags alternative as a command line), then runs the scenarios the database lacks,
// with a progress bar, saying what it does on `out`. Throws InputError for a bad study, and (after
// storing every other row) where scenarios hit a limit of this machine: they run on the next resume.
SweepOutcome sweep(const std::filesystem::path& study_file, const SweepOptions& options, const ScenarioRunner& runner,
                   std::ostream& out);

}  // namespace hetsim
