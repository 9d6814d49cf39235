// File: cli/commands/collective_command.hpp
// `hetsim collective`: one collective (or a size sweep) on a cluster, reported with the
// nccl-tests conventions (time, algorithm bandwidth, bus bandwidth).
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace hetsim::cli {

struct CollectiveArgs {
  std::string cluster = "a100-v100-2x2";
  std::string op = "allreduce";
  std::string size = "1GiB";  // one size, or FIRST:LAST doubling
  std::string algorithm = "auto";
  std::string group = "all";  // "all", or ranges of GPU indices: "0-7,16,24-31"
  std::string fidelity = "phase";
  int root = -1;  // broadcast / reduce root; -1: the group's first member
  std::string report;
  std::string trace;
  std::string calibration = "shipped";  // --calibration: its link-class parameters slow the links
  std::vector<std::string> sets;        // --set cluster.PATH=VALUE: the cluster edited before it is read
};

void add_collective_options(CLI::App* cmd, CollectiveArgs& a);
int run_collective(const CollectiveArgs& a);

}  // namespace hetsim::cli
