// File: sim/platform.cpp
// Zones: a top-level star whose components are node zones (one full zone per node holding its GPU
// hosts and a gateway router). Intra-node fabrics other than NVSwitch are modelled as a star of
// per-GPU links for now; point-to-point meshes are the network fabric issue's work.
#include "sim/platform.hpp"

#include <simgrid/s4u.hpp>

#include <string>

namespace hetsim {

namespace sg4 = simgrid::s4u;

void configure_network_model() {
  // CM02 without cross-traffic or TCP-gamma: a transfer takes latency + size / bandwidth, which
  // matches RDMA fabrics (DESIGN.md: the ring all-reduce then equals the alpha-beta formula).
  sg4::Engine::set_config("network/model:CM02");
  sg4::Engine::set_config("network/crosstraffic:0");
  sg4::Engine::set_config("network/TCP-gamma:0");
}

Platform build_platform(const Cluster& cluster) {
  Platform p;
  p.gpus.resize(cluster.gpus.size());
  auto* root = sg4::create_star_zone("cluster");
  // One fat-pipe switch hop: latency only; with oversubscription 1 the fabric is non-blocking.
  sg4::Link* fabric = root->create_link("fabric", 1e15)
                          ->set_latency(cluster.network.switch_latency_s)
                          ->set_sharing_policy(sg4::Link::SharingPolicy::FATPIPE)
                          ->seal();
  int gpu = 0;
  for (int node = 0; node < cluster.node_count(); ++node) {
    const NodeType& nt = cluster.node_types[cluster.node_type_of[node]];
    const std::string prefix = "node" + std::to_string(node);
    auto* zone = sg4::create_full_zone(prefix);
    zone->set_parent(root);
    auto* gw = zone->create_router(prefix + "_gw");
    std::vector<sg4::Link*> nics;
    for (int k = 0; k < nt.nic.count; ++k) {
      nics.push_back(zone->create_split_duplex_link(prefix + "_nic" + std::to_string(k), nt.nic.bandwidth_Bps)
                         ->set_latency(nt.nic.latency_s)
                         ->seal());
    }
    std::vector<sg4::Host*> hosts;
    std::vector<sg4::Link*> ports;  // each GPU's intra-node port, split-duplex
    for (int g = 0; g < nt.gpus_per_node; ++g, ++gpu) {
      const std::string name = "gpu" + std::to_string(gpu);
      hosts.push_back(zone->create_host(name, kGpuHostSpeed)->seal());
      ports.push_back(zone->create_split_duplex_link(name + "_port", nt.intra.bandwidth_Bps)
                          ->set_latency(nt.intra.latency_s / 2)  // two ports per intra-node route
                          ->seal());
      p.gpus[gpu] = hosts.back();
    }
    for (int a = 0; a < nt.gpus_per_node; ++a) {
      for (int b = 0; b < nt.gpus_per_node; ++b) {
        if (a == b) continue;
        zone->add_route(hosts[a]->get_netpoint(), hosts[b]->get_netpoint(), nullptr, nullptr,
                        {{ports[a], sg4::LinkInRoute::Direction::UP}, {ports[b], sg4::LinkInRoute::Direction::DOWN}},
                        false);
      }
      sg4::Link* nic = nics[a % nt.nic.count];
      zone->add_route(hosts[a]->get_netpoint(), gw, nullptr, nullptr, {{nic, sg4::LinkInRoute::Direction::UP}}, false);
      zone->add_route(gw, hosts[a]->get_netpoint(), nullptr, nullptr, {{nic, sg4::LinkInRoute::Direction::DOWN}}, false);
    }
    zone->seal();
    root->add_route(zone->get_netpoint(), nullptr, gw, nullptr, {sg4::LinkInRoute(fabric)}, false);
    root->add_route(nullptr, zone->get_netpoint(), nullptr, gw, {}, false);
  }
  root->seal();
  return p;
}

}  // namespace hetsim
