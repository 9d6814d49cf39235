// File: sim/platform.hpp
// Turns a Cluster into a SimGrid platform: one host per GPU and one per GPU's staging buffer in
// host memory, one SimGrid link per Fabric link, and a single netzone whose routing asks the
// Fabric (topologies/fabric.hpp) for the links between any two endpoints. One zone with computed
// routes builds in milliseconds for thousands of GPUs (thousands of nested zones would not).
// Must be called inside a fresh simgrid::s4u::Engine (see platform_server.hpp).
#pragma once

#include <memory>
#include <vector>

#include "topologies/fabric.hpp"

namespace simgrid::s4u {
class Host;
class Link;
}  // namespace simgrid::s4u

namespace hetsim {

struct Platform {
  std::unique_ptr<Fabric> fabric;
  std::vector<simgrid::s4u::Host*> gpus;     // indexed like Cluster::gpus
  std::vector<simgrid::s4u::Host*> staging;  // GPU g's pinned host buffer
  std::vector<simgrid::s4u::Link*> links;    // indexed like Fabric::links()
  std::vector<simgrid::s4u::Host*> switches; // endpoints 2n..: switch ports, then reduction engines

  [[nodiscard]] simgrid::s4u::Host* endpoint(int e) const {
    const int n = static_cast<int>(gpus.size());
    return e < n ? gpus[e] : e < 2 * n ? staging[e - n] : switches[e - 2 * n];
  }
};

// Work units of a GPU host per second: compute tasks execute duration_s * kGpuHostSpeed units.
inline constexpr double kGpuHostSpeed = 1e9;

// Network model settings for RDMA-like fabrics (no TCP slow start or ACK traffic). Call before
// build_platform.
void configure_network_model();

[[nodiscard]] Platform build_platform(const Cluster& cluster);

}  // namespace hetsim
