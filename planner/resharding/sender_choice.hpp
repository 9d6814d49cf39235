// File: planner/resharding/sender_choice.hpp
// Who sends each resharding work, and in what order: the first replica; the least-loaded GPU;
// the least-loaded NIC; or sender and order together (randomised greedy packing of concurrent
// works, then a depth-first search with a lower bound, both on a NIC-level model).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "planner/resharding/reshard_works.hpp"
#include "topologies/cluster.hpp"

namespace hetsim {

enum class LoadBalance { kNone, kGpu, kNic, kOrder };
[[nodiscard]] std::string_view load_balance_name(LoadBalance b);  // none, gpu, nic, order
[[nodiscard]] std::optional<LoadBalance> load_balance_from_name(std::string_view name);

// Bytes each GPU and each NIC (node, NIC index) has been chosen to send so far. One object per
// program, so that loads accumulate across all its resharding tasks.
struct SenderLoads {
  std::map<int, double> gpu_bytes;
  std::map<std::pair<int, int>, double> nic_bytes;
};

// The order search. Deterministic: the greedy draws from `seed`; the depth-first search stops
// after `max_expansions` nodes, or earlier at `budget_s` of wall time (then the result may depend
// on the machine's speed, and the schedule says so). With no greedy rounds the search starts from
// the first replicas in the works' own order.
struct OrderOptions {
  uint64_t seed = 0;
  int greedy_rounds = 100;
  long max_expansions = 200000;
  double budget_s = 1.0;
};

struct ReshardSchedule {
  std::vector<int> order;   // work indices in submission order
  std::vector<int> sender;  // per work index
  // The solver's own model: every NIC takes part in one work at a time, as sender or receiver
  // (half duplex, as in the paper), a work lasting bytes / the slowest NIC it crosses.
  double model_makespan_s = 0;
  // Order mode only.
  std::string solver;       // "greedy" or "search" (which one found the schedule kept)
  // The incumbent the search started from: the greedy's schedule (or the first replicas in the
  // works' order when there are no greedy rounds).
  double greedy_makespan_s = 0;
  long expansions = 0;
  bool search_exhausted = false;  // the search proved its schedule optimal under the model
  bool stopped_by_time = false;
};

// Chooses the senders (and with kOrder the order) of `w`'s works, adding their bytes to `loads`.
[[nodiscard]] ReshardSchedule schedule_works(const ReshardWorks& w, const Cluster& cluster, LoadBalance balance,
                                             SenderLoads& loads, const OrderOptions& options = {});

// The NIC a GPU sends and receives through: (node, local index mod NICs per node).
[[nodiscard]] std::pair<int, int> nic_of(const Cluster& cluster, int gpu);

}  // namespace hetsim
