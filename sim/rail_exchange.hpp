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

// step_estimate of expanded(x), bit for bit, from passes over its transfers' routes and no edge
// held: per link, how many transfers of each phase cross it (where links carry both phases, as
// NVLink-mesh nodes make them, one more pass adds their load in the order the round group where
// both run lists its transfers: by source, then destination GPU); then per transfer its time
// under each round group's loads. nullopt where a transfer is staged through hosts (the caller
// expands it).
[[nodiscard]] std::optional<double> rail_exchange_step_estimate(const RailExchange& x, const Fabric& fabric);

}  // namespace hetsim
