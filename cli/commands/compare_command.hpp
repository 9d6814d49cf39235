// File: cli/commands/compare_command.hpp
// `hetsim compare [--report R.json] A... --vs B...`: two scenarios side by side, the answer to
// "what changes if ...". A is a `simulate` or `plan` command line; B is another one, or, when it
// does not start with simulate/plan, A's command line with B's words added (a --set, another
// --strategy). Both run in this process; the table gives iteration time, throughput, MFU,
// efficiency, per GPU type compute / communication / idle and peak memory, and the kinds of task
// whose time on the critical path changed most.
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace hetsim::cli {

struct CompareArgs {
  std::string report;  // JSON with both reports and the differences
};

void add_compare_options(CLI::App* cmd, CompareArgs& a);
// `words`: what follows compare's own options (A... --vs B...).
int run_compare(const CompareArgs& a, const std::vector<std::string>& words);

}  // namespace hetsim::cli
