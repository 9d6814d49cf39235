// File: cli/app.hpp
// The hetsim command line: every subcommand, parsed and run. main() adds the exit codes; a sweep's
// workers run their scenarios through it in-process.
#pragma once

#include <string>
#include <vector>

namespace hetsim::cli {

// Parses and runs one command line (argv[0] is the program). Returns the exit code; InputError and
// other exceptions propagate. With `throw_parse_errors`, a bad command line throws InputError
// instead of printing usage.
int run_cli(int argc, char** argv, bool throw_parse_errors = false);

// Parses `args` (a command line without the program name) as run_cli would, and runs nothing:
// throws InputError with the parser's message when it is not a valid hetsim command line (a study's
// flags, checked before its scenarios run).
void check_command_line(std::vector<std::string> args);

}  // namespace hetsim::cli
