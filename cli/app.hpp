// File: cli/app.hpp
// The hetsim command line: every subcommand, parsed and run. main() adds the exit codes; a sweep's
// workers run their scenarios through it in-process.
#pragma once

#include <string>
#include <vector>

namespace hetsim::cli {

// Exit codes (README, "CLI"; main.cpp): 0 success, 1 internal error, 2 bad input or a resource
// limit, 3 infeasible: `simulate` whose run does not fit and `plan` when no program of its own
// fits (the summary and stderr say why; the report is written all the same), 128 + N stopped by
// signal N.
inline constexpr int kExitInfeasible = 3;

// Parses and runs one command line (argv[0] is the program). Returns the exit code; InputError and
// other exceptions propagate. With `throw_parse_errors`, a bad command line throws InputError
// instead of printing usage.
int run_cli(int argc, char** argv, bool throw_parse_errors = false);

// Parses `args` (a command line without the program name) as run_cli would, and runs nothing:
// throws InputError with the parser's message when it is not a valid hetsim command line (a study's
// flags, checked before its scenarios run); for plan and simulate also when it names an output
// file (a scenario's report goes to the database) or its inputs do not load with its edits.
void check_command_line(std::vector<std::string> args);

}  // namespace hetsim::cli
