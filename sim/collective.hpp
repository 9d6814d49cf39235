// File: sim/collective.hpp
// Collective algorithms as SimGrid traffic, run from inside an actor. Two fidelities:
// `step` sends every algorithm step as its own set of messages; `phase` sends one flow per ring
// edge carrying all of a phase's bytes and adds the remaining per-step latencies, which keeps
// max-min sharing with other traffic at a fraction of the events (DESIGN.md: SimGrid speed).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace simgrid::s4u {
class Host;
}

namespace hetsim {

enum class Fidelity { kPhase, kStep };
[[nodiscard]] std::string_view fidelity_name(Fidelity f);

// Ring all-reduce of `size_bytes` over `ring` (hosts in ring order): reduce-scatter then
// all-gather, 2(n-1) steps of size/n each. Returns the number of network activities started.
// On an idle uniform ring it takes 2(n-1)/n * S/B + 2(n-1) * alpha.
uint64_t ring_allreduce(const std::vector<simgrid::s4u::Host*>& ring, double size_bytes, Fidelity fidelity);

// The alpha-beta closed form above, for tests and for analytic estimates.
[[nodiscard]] double ring_allreduce_time(int n, double size_bytes, double bandwidth_Bps, double latency_s);

}  // namespace hetsim
