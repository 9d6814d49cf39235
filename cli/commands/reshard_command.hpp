// File: cli/commands/reshard_command.hpp
// `hetsim reshard`: one cross-mesh resharding on its own (a microbenchmark): time, effective
// bandwidth (tensor bits / time, as the cross-mesh resharding paper plots it) and network bytes.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace hetsim::cli {

struct ReshardArgs {
  std::string cluster = "a100-v100-2x2";
  std::string src, src_shape, src_spec;
  std::string dst, dst_shape, dst_spec;
  std::string tensor;
  std::string dtype = "fp32";
  std::string method = "broadcast";
  std::string load_balance = "order";
  unsigned long long seed = 0;
  double budget_s = 1.0;
  long max_expansions = 200000;
  std::string report;
  std::string trace;
};

void add_reshard_options(CLI::App* cmd, ReshardArgs& a);
int run_reshard(const ReshardArgs& a);

}  // namespace hetsim::cli
