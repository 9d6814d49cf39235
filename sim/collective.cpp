// File: sim/collective.cpp
#include "sim/collective.hpp"

#include <simgrid/s4u.hpp>

#include <algorithm>
#include <cmath>

namespace hetsim {

namespace sg4 = simgrid::s4u;

std::string_view fidelity_name(Fidelity f) { return f == Fidelity::kStep ? "step" : "phase"; }

namespace {

// Starts one flow per ring edge and waits for all of them.
uint64_t ring_round(const std::vector<sg4::Host*>& ring, double bytes) {
  const size_t n = ring.size();
  std::vector<sg4::CommPtr> comms;
  comms.reserve(n);
  const auto amount = static_cast<uint64_t>(std::llround(bytes));
  for (size_t k = 0; k < n; ++k) comms.push_back(sg4::Comm::sendto_async(ring[k], ring[(k + 1) % n], amount));
  sg4::Comm::wait_all(comms);
  return n;
}

double max_edge_latency(const std::vector<sg4::Host*>& ring) {
  double worst = 0;
  std::vector<sg4::Link*> links;
  for (size_t k = 0; k < ring.size(); ++k) {
    double lat = 0;
    links.clear();
    ring[k]->route_to(ring[(k + 1) % ring.size()], links, &lat);
    worst = std::max(worst, lat);
  }
  return worst;
}

}  // namespace

uint64_t ring_allreduce(const std::vector<sg4::Host*>& ring, double size_bytes, Fidelity fidelity) {
  const size_t n = ring.size();
  if (n < 2 || size_bytes <= 0) return 0;
  const int steps = 2 * static_cast<int>(n - 1);
  const double chunk = size_bytes / static_cast<double>(n);
  if (fidelity == Fidelity::kStep) {
    uint64_t started = 0;
    for (int s = 0; s < steps; ++s) started += ring_round(ring, chunk);
    return started;
  }
  // One flow per edge carries all 2(n-1) chunks; the flow pays one latency, the other steps'
  // latencies are added after it (a step cannot start before the previous one's data arrived).
  const uint64_t started = ring_round(ring, chunk * steps);
  sg4::this_actor::sleep_for((steps - 1) * max_edge_latency(ring));
  return started + 1;
}

double ring_allreduce_time(int n, double size_bytes, double bandwidth_Bps, double latency_s) {
  if (n < 2) return 0;
  return 2.0 * (n - 1) / n * size_bytes / bandwidth_Bps + 2.0 * (n - 1) * latency_s;
}

}  // namespace hetsim
