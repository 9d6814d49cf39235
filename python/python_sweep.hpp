// File: python/python_sweep.hpp
// hetsim.sweep(): the sweep facade the CLI calls (studies/sweep/sweep.hpp), with a ScenarioRunner
// of the module's own. A study's scenarios are `hetsim plan|simulate` command lines (its flags are
// that command's switches), and command lines are the CLI's to read: each scenario is checked and
// run by the hetsim program of this build or installation (`hetsim scenario`, a subcommand for
// programs), in the sweep's worker processes. Planning the scenarios, the database, resuming and
// the rows are the facade's, as for `hetsim sweep`.
#pragma once

#include <filesystem>

#include "studies/sweep/sweep.hpp"

namespace hetsim::python {

// The hetsim program beside this module: PREFIX/bin/hetsim for an installed module
// (base/data_dir.hpp's install_prefix), else the build tree's. Throws InputError when it is
// missing or is not this module's version (the scenarios' keys hold the version).
[[nodiscard]] std::filesystem::path hetsim_program();

// check and run through hetsim_program(); version: this module's and the build ID the program says
// (a sweep run from Python keys its rows as the program's own sweeps do).
[[nodiscard]] ScenarioRunner program_scenario_runner();

}  // namespace hetsim::python
