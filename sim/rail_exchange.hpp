// File: sim/rail_exchange.hpp
// NCCL's PXN all-to-all held as a RailExchange (sim/schedule.hpp): its edges when a simulation
// needs them, and its step estimate without them.
#pragma once

#include <optional>

#include "sim/schedule.hpp"
#include "topologies/fabric.hpp"

namespace hetsim {

// The schedule of edges it stands for: pipelined({intra, inter}, pieces).
[[nodiscard]] Schedule expanded(const RailExchange& x);

// step_estimate of expanded(x), bit for bit, from two passes over its transfers' routes and no
// edge held: per link, how many transfers of each phase cross it; then per transfer its time on
// those loads. Exact where no shared link carries transfers of both phases (the load of such a
// link would be a sum whose order matters) and none is staged through hosts; nullopt otherwise
// (the caller expands it).
[[nodiscard]] std::optional<double> rail_exchange_step_estimate(const RailExchange& x, const Fabric& fabric);

}  // namespace hetsim
