// File: planner/hybrid/pipeline_mirrors.cpp
#include "planner/hybrid/pipeline_mirrors.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <variant>

namespace hetsim {

namespace {

bool same_chunks(const StagePlan& a, const StagePlan& b) {
  if (a.chunks.size() != b.chunks.size()) return false;
  for (size_t c = 0; c < a.chunks.size(); ++c) {
    const LayerRange &x = a.chunks[c], &y = b.chunks[c];
    if (x.first != y.first || x.last != y.last || x.part != y.part) return false;
  }
  return true;
}

// Where a pipeline's devices sit, as the planner's choices read it (boundary resharding takes
// send-recv where a TP group spans hosts; NVLink domains): for each device in stage order, the
// first-seen index of its node and of its NVLink domain. (Its place inside the node is not: links
// it shares unevenly there show in the simulation, which checks the copies keep one pace.)
std::vector<std::array<int, 2>> placement(const PipelinePlan& pl, const Cluster& cluster) {
  std::vector<std::array<int, 2>> out;
  std::map<int, int> nodes, domains;
  for (const StagePlan& st : pl.stages) {
    for (const int d : st.devices) {
      const GpuSlot& g = cluster.gpus[static_cast<size_t>(d)];
      const int node = nodes.try_emplace(g.node, static_cast<int>(nodes.size())).first->second;
      const int domain = domains.try_emplace(g.domain, static_cast<int>(domains.size())).first->second;
      out.push_back({node, domain});
    }
  }
  return out;
}

// Whether pipelines p and q run the same tasks, device for device, from the same moments.
bool alike(const HybridPlan& plan, const Cluster& cluster, const PipelineLayout& layout, size_t p, size_t q) {
  const PipelinePlan &a = plan.pipelines[p], &b = plan.pipelines[q];
  if (a.micro_batches != b.micro_batches || a.stages.size() != b.stages.size()) return false;
  if (placement(a, cluster) != placement(b, cluster)) return false;
  const auto health = [&](int d) {
    return cluster.node_health.empty() ? Degradation{} : cluster.node_health[static_cast<size_t>(cluster.gpus[d].node)];
  };
  for (size_t s = 0; s < a.stages.size(); ++s) {
    const StagePlan &x = a.stages[s], &y = b.stages[s];
    if (x.tp != y.tp || x.cp != y.cp || x.ep != y.ep || x.expert_tp != y.expert_tp || x.devices.size() != y.devices.size() ||
        !same_chunks(x, y)) {
      return false;
    }
    for (size_t k = 0; k < x.devices.size(); ++k) {
      const int dx = x.devices[k], dy = y.devices[k];
      if (cluster.gpus[dx].node_type != cluster.gpus[dy].node_type || !(health(dx) == health(dy))) return false;
    }
    const StageInfo &i = layout.stages[p][s], &j = layout.stages[q][s];
    if (i.order != j.order || i.chunk_blocks != j.chunk_blocks || i.replicas.size() != j.replicas.size()) return false;
    for (size_t r = 0; r < i.replicas.size(); ++r) {
      if (i.replicas[r].samples != j.replicas[r].samples || i.replicas[r].first_sample != j.replicas[r].first_sample) return false;
    }
  }
  return true;
}

// Links between nodes that pipelines may share unevenly: an oversubscribed tier, or a network read
// from a graph file. Pipelines there tend to part (one's transfers slowed where another's are not:
// Llama 3.1 405B on meta-h100-24k's 7:1 core), and the simulator would then run them twice,
// mirrored until they part and written out; they are written out from the start instead.
bool uneven(const NetworkSpec& n) {
  switch (n.topology) {
    case NetTopology::kSingleSwitch: return false;
    case NetTopology::kFatTree:
    case NetTopology::kRailOptimized: return n.oversubscription > 1;
    case NetTopology::kClos3: return std::any_of(n.tier_oversubscription.begin(), n.tier_oversubscription.end(), [](double o) { return o > 1; });
    case NetTopology::kGraph: return true;
  }
  return true;
}

}  // namespace

std::vector<int> alike_pipelines(const HybridPlan& plan, const Cluster& cluster, const PipelineLayout& layout) {
  std::vector<int> mirror_of(plan.pipelines.size(), -1);
  // (Resharding that balances senders by NIC loads or orders them over the whole plan chooses each
  // pipeline's senders after the others': not alike.)
  const bool balanced_by_plan = plan.resharding.load_balance == LoadBalance::kNic || plan.resharding.load_balance == LoadBalance::kOrder;
  if (plan.gradient_sync == GradientSync::kZero3 || uneven(cluster.network) || balanced_by_plan) return mirror_of;
  for (size_t q = 1; q < plan.pipelines.size(); ++q) {
    for (size_t p = 0; p < q; ++p) {
      if (mirror_of[p] < 0 && alike(plan, cluster, layout, p, q)) {
        mirror_of[q] = static_cast<int>(p);
        break;
      }
    }
  }
  return mirror_of;
}

PipelineMirrors pipeline_mirrors(const std::vector<int>& mirror_of, const PipelineLayout& layout, int devices) {
  PipelineMirrors m;
  m.mirror_of = mirror_of;
  for (size_t q = 0; q < mirror_of.size(); ++q) {
    if (mirror_of[q] < 0) continue;
    const size_t p = static_cast<size_t>(mirror_of[q]);
    if (m.maps.empty()) m.maps.resize(mirror_of.size());
    std::vector<int>& map = m.maps[p].emplace_back(static_cast<size_t>(devices), -1);
    for (size_t s = 0; s < layout.stages[p].size(); ++s) {
      const StageInfo &from = layout.stages[p][s], &to = layout.stages[q][s];
      for (size_t r = 0; r < from.replicas.size(); ++r) {
        for (size_t k = 0; k < from.replicas[r].devices.size(); ++k) map[from.replicas[r].devices[k]] = to.replicas[r].devices[k];
      }
    }
  }
  return m;
}

void add_pipeline_mirrors(Program& program, size_t first, const PipelineMirrors& mirrors) {
  if (!mirrors.any()) return;
  // The written pipeline each device lies in (-1: none, or one without mirrors).
  std::vector<int> pipeline_of(program.devices.size(), -1);
  for (size_t p = 0; p < mirrors.maps.size(); ++p) {
    if (mirrors.maps[p].empty()) continue;
    for (size_t d = 0; d < pipeline_of.size(); ++d) {
      if (mirrors.maps[p].front()[d] >= 0) pipeline_of[d] = static_cast<int>(p);
    }
  }
  const auto maps_of = [&](int device) -> const std::vector<std::vector<int>>* {
    const int p = pipeline_of[static_cast<size_t>(device)];
    return p < 0 ? nullptr : &mirrors.maps[static_cast<size_t>(p)];
  };
  const auto mapped = [](const std::vector<int>& map, int d) {
    const int to = map[static_cast<size_t>(d)];
    if (to < 0) throw std::logic_error("a pipeline task reaches outside its pipeline");
    return to;
  };
  for (size_t i = first; i < program.tasks.size(); ++i) {
    std::visit(
        [&](auto& body) {
          using T = std::decay_t<decltype(body)>;
          if constexpr (std::is_same_v<T, ComputeTask>) {
            const auto* maps = maps_of(body.device);
            if (maps == nullptr) return;
            const std::vector<int> own = body.mirrors;
            for (const std::vector<int>& map : *maps) {
              body.mirrors.push_back(mapped(map, body.device));
              for (int d : own) body.mirrors.push_back(mapped(map, d));
            }
            body.copies = static_cast<int>(1 + maps->size());
          } else if constexpr (std::is_same_v<T, SendTask>) {
            const auto* maps = maps_of(body.src);
            if (maps == nullptr) return;
            const std::vector<std::pair<int, int>> own = body.transfers();
            for (const std::vector<int>& map : *maps) {
              for (const auto& [src, dst] : own) body.mirrors.emplace_back(mapped(map, src), mapped(map, dst));
            }
            body.copies = static_cast<int>(1 + maps->size());
          } else {
            const auto* maps = maps_of(body.group.front());
            if (maps == nullptr) return;
            for (const std::vector<int>& map : *maps) {
              std::vector<int>& g = body.mirror_groups.emplace_back();
              for (int d : body.group) g.push_back(mapped(map, d));
            }
          }
        },
        program.tasks[i].body);
  }
}

void mirror_device_state(const PipelineMirrors& mirrors, PipelineLayout& layout, ComputeStreams& streams,
                         std::vector<std::vector<std::vector<int>>>& param_waits) {
  for (const std::vector<std::vector<int>>& maps : mirrors.maps) {
    for (const std::vector<int>& map : maps) {
      for (size_t d = 0; d < map.size(); ++d) {
        const int to = map[d];
        if (to < 0) continue;
        layout.last_grad[static_cast<size_t>(to)] = layout.last_grad[d];
        layout.tp_tail[static_cast<size_t>(to)] = layout.tp_tail[d];
        streams.mirror(static_cast<int>(d), to);
        for (std::vector<int>& waits : param_waits[static_cast<size_t>(to)]) waits.clear();
      }
    }
  }
}

}  // namespace hetsim
