// File: sim/platform.hpp
// Turns a Cluster into a SimGrid platform: one host per GPU; inside a node a star of per-GPU
// links (each GPU's NVLink/xGMI/PCIe bandwidth per direction); between nodes each GPU's traffic
// leaves through NIC (local index mod NIC count) and crosses the switch fabric.
// Must be called inside a fresh simgrid::s4u::Engine (see isolated_run.hpp).
#pragma once

#include <vector>

#include "topologies/cluster.hpp"

namespace simgrid::s4u {
class Host;
}

namespace hetsim {

struct Platform {
  std::vector<simgrid::s4u::Host*> gpus;  // indexed like Cluster::gpus
};

// Work units of a GPU host per second: compute tasks execute duration_s * kGpuHostSpeed units.
inline constexpr double kGpuHostSpeed = 1e9;

// Network model settings for RDMA-like fabrics (no TCP slow start or ACK traffic). Call before
// build_platform.
void configure_network_model();

[[nodiscard]] Platform build_platform(const Cluster& cluster);

}  // namespace hetsim
