// File: cli/main.cpp
// The hetsim executable: thin subcommands over the library. Exit codes: 0 success, 2 bad input
// (messages like compiler errors on stderr), 1 internal error.
#include <iostream>

#include "base/input_error.hpp"
#include "cli/app.hpp"

int main(int argc, char** argv) {
  try {
    return hetsim::cli::run_cli(argc, argv);
  } catch (const hetsim::InputError& e) {
    std::cout.flush();
    std::cerr << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cout.flush();
    std::cerr << "hetsim: internal error: " << e.what() << "\n";
    return 1;
  }
}
