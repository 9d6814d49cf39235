// File: planner/resharding/reshard_case.cpp
#include "planner/resharding/reshard_case.hpp"

#include <set>

#include "planner/resharding/reshard_program.hpp"

namespace hetsim {
namespace {

void check_mesh(const Mesh& m, const char* field, const Cluster& cluster, std::vector<ReshardProblem>& out) {
  if (m.hosts < 1 || m.gpus_per_host < 1 || static_cast<long>(m.devices.size()) != static_cast<long>(m.hosts) * m.gpus_per_host) {
    out.push_back({field, "the shape " + std::to_string(m.hosts) + "x" + std::to_string(m.gpus_per_host) + " needs " +
                              std::to_string(static_cast<long>(m.hosts) * m.gpus_per_host) + " GPUs but " +
                              std::to_string(m.devices.size()) + " are listed"});
    return;
  }
  for (int h = 0; h < m.hosts; ++h) {
    const int first = m.devices[static_cast<size_t>(h) * m.gpus_per_host];
    for (int g = 1; g < m.gpus_per_host; ++g) {
      const int d = m.devices[static_cast<size_t>(h) * m.gpus_per_host + g];
      if (cluster.gpus[d].node != cluster.gpus[first].node) {
        out.push_back({field, "row " + std::to_string(h) + " of the mesh (a host) has GPU " + std::to_string(first) +
                                  " on node " + std::to_string(cluster.gpus[first].node) + " and GPU " + std::to_string(d) +
                                  " on node " + std::to_string(cluster.gpus[d].node) +
                                  "; list each host's GPUs together, hosts x GPUs per host"});
        return;
      }
    }
  }
  // Rows are hosts: two on one node would share its NICs where the load balance counts them apart.
  for (int h = 1; h < m.hosts; ++h) {
    const int node = cluster.gpus[m.devices[static_cast<size_t>(h) * m.gpus_per_host]].node;
    for (int e = 0; e < h; ++e) {
      if (cluster.gpus[m.devices[static_cast<size_t>(e) * m.gpus_per_host]].node != node) continue;
      out.push_back({field, "rows " + std::to_string(e) + " and " + std::to_string(h) + " of the mesh (hosts) are both on node " +
                                std::to_string(node) + "; each row is a host of its own (for GPUs of one node, write the shape 1x" +
                                std::to_string(static_cast<long>(m.hosts) * m.gpus_per_host) + ")"});
      return;
    }
  }
}

}  // namespace

std::vector<ReshardProblem> check_reshard_case(const ReshardCase& c, const Cluster& cluster) {
  std::vector<ReshardProblem> out;
  check_mesh(c.src, "src", cluster, out);
  check_mesh(c.dst, "dst", cluster, out);
  const std::set<int> src(c.src.devices.begin(), c.src.devices.end());
  for (int d : c.dst.devices) {
    if (src.count(d) != 0) {
      out.push_back({"dst", "GPU " + std::to_string(d) + " is in both meshes; cross-mesh resharding needs disjoint meshes"});
      break;
    }
  }
  if (!out.empty()) return out;
  if (std::string p = layout_problem(c.src, c.src_spec, c.tensor); !p.empty()) out.push_back({"src-spec", p});
  if (std::string p = layout_problem(c.dst, c.dst_spec, c.tensor); !p.empty()) out.push_back({"dst-spec", p});
  return out;
}

ReshardOutcome build_reshard(const ReshardCase& c, const Cluster& cluster) {
  ReshardOutcome out;
  out.src = make_layout(c.src, c.src_spec, c.tensor, c.element_bytes);
  out.dst = make_layout(c.dst, c.dst_spec, c.tensor, c.element_bytes);
  out.tensor_bytes = out.src.tensor_bytes();
  out.works = make_works(out.src, out.dst, c.method, cluster);
  SenderLoads loads;
  out.schedule = schedule_works(out.works, cluster, c.balance, loads, c.order);
  out.network_bytes = network_bytes(out.works, out.schedule.sender, cluster);
  out.program.strategy = "reshard";
  out.program.devices.resize(cluster.gpu_count());
  (void)emit_reshard(out.program, out.works, out.schedule, {}, "reshard");
  return out;
}

}  // namespace hetsim
