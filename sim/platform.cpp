// File: sim/platform.cpp
#include "sim/platform.hpp"

#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <simgrid/s4u.hpp>

#include <cstdint>
#include <string>
#include <unordered_map>

namespace hetsim {

namespace sg4 = simgrid::s4u;
namespace kr = simgrid::kernel::routing;

namespace {

// A netzone whose routes come from the Fabric: no route tables, O(route length) per lookup.
class FabricZone : public kr::NetZoneImpl {
 public:
  FabricZone(const std::string& name, const Fabric& fabric) : NetZoneImpl(name), fabric_(fabric) {}

  void register_endpoint(const sg4::Host* host, int endpoint) {
    const unsigned long id = host->get_netpoint()->id();
    if (endpoint_of_.size() <= id) endpoint_of_.resize(id + 1, -1);
    endpoint_of_[id] = endpoint;
  }
  void set_links(std::vector<simgrid::kernel::resource::StandardLinkImpl*> impls) { impls_ = std::move(impls); }

  // SimGrid asks for the route of every transfer; a run uses few distinct pairs, so each is
  // looked up in the Fabric once.
  void get_local_route(const kr::NetPoint* src, const kr::NetPoint* dst, kr::Route* into, double* latency) override {
    const int s = endpoint_of_.at(src->id());
    const int d = endpoint_of_.at(dst->id());
    auto [it, fresh] = routes_.try_emplace((static_cast<uint64_t>(s) << 32) | static_cast<uint32_t>(d));
    if (fresh) {
      fabric_.route(s, d, scratch_);
      // A fat pipe (switch crossbar) limits each flow alone to its bandwidth; where a shared link
      // of the route is no faster, it can never bind and is left out of SimGrid's route (its
      // latency stays in latency_s). Left in, every flow through a switch would join one sharing
      // system, which the max-min solver re-solves whole at every flow event (quadratic in flows).
      double slowest_shared_Bps = -1;
      for (int l : scratch_.links) {
        const FabricLink& fl = fabric_.links()[l];
        if (fl.shared && (slowest_shared_Bps < 0 || fl.bandwidth_Bps < slowest_shared_Bps)) slowest_shared_Bps = fl.bandwidth_Bps;
      }
      for (int l : scratch_.links) {
        const FabricLink& fl = fabric_.links()[l];
        const bool redundant = !fl.shared && slowest_shared_Bps >= 0 && fl.bandwidth_Bps >= slowest_shared_Bps;
        if (!redundant) it->second.links.push_back(impls_[l]);
      }
      it->second.latency_s = scratch_.latency_s;
    }
    into->link_list_.insert(into->link_list_.end(), it->second.links.begin(), it->second.links.end());
    if (latency != nullptr) *latency += it->second.latency_s;
  }

 private:
  const Fabric& fabric_;
  std::vector<int> endpoint_of_;  // netpoint id -> fabric endpoint
  std::vector<simgrid::kernel::resource::StandardLinkImpl*> impls_;
  Route scratch_;
  struct CachedRoute {
    std::vector<simgrid::kernel::resource::StandardLinkImpl*> links;
    double latency_s = 0;
  };
  std::unordered_map<uint64_t, CachedRoute> routes_;  // (src << 32 | dst) endpoints
};

}  // namespace

void configure_network_model() {
  // CM02 without cross-traffic or TCP-gamma: a transfer takes latency + size / bandwidth, which
  // matches RDMA fabrics (measured on SimGrid 3.32: the ring all-reduce then equals the alpha-beta formula to 4 digits).
  sg4::Engine::set_config("network/model:CM02");
  sg4::Engine::set_config("network/crosstraffic:0");
  sg4::Engine::set_config("network/TCP-gamma:0");
}

Platform build_platform(const Cluster& cluster) {
  Platform p;
  p.fabric = std::make_unique<Fabric>(cluster);
  auto* zone = new FabricZone("cluster", *p.fabric);  // owned by the engine once sealed
  sg4::NetZone* iface = zone->get_iface();
  std::vector<simgrid::kernel::resource::StandardLinkImpl*> impls;
  for (const FabricLink& fl : p.fabric->links()) {
    sg4::Link* l = iface->create_link(fl.name, fl.bandwidth_Bps)->set_latency(fl.latency_s);
    if (!fl.shared) l->set_sharing_policy(sg4::Link::SharingPolicy::FATPIPE);
    l->seal();
    p.links.push_back(l);
    impls.push_back(l->get_impl());
  }
  zone->set_links(std::move(impls));
  const int n = cluster.gpu_count();
  for (int g = 0; g < n; ++g) {
    p.gpus.push_back(iface->create_host("gpu" + std::to_string(g), kGpuHostSpeed)->seal());
    zone->register_endpoint(p.gpus.back(), g);
  }
  for (int g = 0; g < n; ++g) {
    p.staging.push_back(iface->create_host("gpu" + std::to_string(g) + ".host", kGpuHostSpeed)->seal());
    zone->register_endpoint(p.staging.back(), p.fabric->staging(g));
  }
  for (int e = 2 * n; e < p.fabric->endpoint_count(); ++e) {  // NVSwitch endpoints (NVLS)
    p.switches.push_back(iface->create_host("switch" + std::to_string(e - 2 * n), kGpuHostSpeed)->seal());
    zone->register_endpoint(p.switches.back(), e);
  }
  iface->seal();
  return p;
}

}  // namespace hetsim
