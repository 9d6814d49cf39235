// File: planner/resharding/reshard_works.cpp
#include "planner/resharding/reshard_works.hpp"

#include <algorithm>
#include <set>

namespace hetsim {
namespace {

// Why Alpa's local all-gather rewrite cannot run on `dst`; empty when it can, with the
// dimension to split among each tile's replicas in `dim`.
std::string local_gather_problem(const MeshLayout& dst, const Cluster& cluster, int& dim) {
  bool replicated = false;
  for (const Tile& t : dst.tiles) {
    for (int r : t.replicas) {
      if (cluster.gpus[r].node != cluster.gpus[t.replicas.front()].node) {
        return "the destination replicates a tile across hosts (Alpa's rewrite needs the host axis split at least as "
               "many ways as there are hosts)";
      }
    }
    replicated = replicated || t.replicas.size() > 1;
  }
  if (!replicated) return "no destination tile is replicated inside a host";
  long widest = 0;
  for (size_t d = 0; d < dst.shape.size(); ++d) {
    bool divides = true;
    long extent = 0;
    for (const Tile& t : dst.tiles) {
      divides = divides && (t.hi[d] - t.lo[d]) % static_cast<long>(t.replicas.size()) == 0;
      extent = std::max(extent, t.hi[d] - t.lo[d]);
    }
    if (divides && extent > widest) {
      dim = static_cast<int>(d);
      widest = extent;
    }
  }
  if (dim >= 0) return "";
  return "no tensor dimension of the destination tiles divides by their replica count";
}

}  // namespace

std::string_view method_name(ReshardMethod m) {
  switch (m) {
    case ReshardMethod::kSendRecv: return "send-recv";
    case ReshardMethod::kLocalAllGather: return "local-all-gather";
    case ReshardMethod::kBroadcast: return "broadcast";
    case ReshardMethod::kSignal: return "signal";
  }
  return "?";
}

std::optional<ReshardMethod> method_from_name(std::string_view name) {
  for (ReshardMethod m : {ReshardMethod::kSendRecv, ReshardMethod::kLocalAllGather, ReshardMethod::kBroadcast,
                          ReshardMethod::kSignal}) {
    if (method_name(m) == name) return m;
  }
  return std::nullopt;
}

ReshardWorks make_works(const MeshLayout& src, const MeshLayout& dst, ReshardMethod method, const Cluster& cluster) {
  ReshardWorks out;
  out.requested = method;
  out.method = method;
  out.slices = intersect(src, dst);
  int split_dim = -1;
  if (method == ReshardMethod::kLocalAllGather) {
    out.note = local_gather_problem(dst, cluster, split_dim);
    if (!out.note.empty()) out.method = ReshardMethod::kSendRecv;
  }
  for (size_t i = 0; i < out.slices.size(); ++i) {
    const Slice& s = out.slices[i];
    const std::vector<int>& senders = src.tiles[s.src_tile].replicas;
    const Tile& tile = dst.tiles[s.dst_tile];
    ReshardWork w{static_cast<int>(i), s.bytes, senders, {}};
    switch (out.method) {
      case ReshardMethod::kBroadcast:
        w.receivers = tile.replicas;
        out.works.push_back(std::move(w));
        break;
      case ReshardMethod::kSendRecv:
      case ReshardMethod::kSignal:
        if (out.method == ReshardMethod::kSignal) w.bytes = 1;  // Alpa's signal send/recv: a 1-byte message
        for (int r : tile.replicas) {
          w.receivers = {r};
          out.works.push_back(w);
        }
        break;
      case ReshardMethod::kLocalAllGather: {
        // Replica k receives the k-th of r equal parts of the tile along split_dim.
        const long r = static_cast<long>(tile.replicas.size());
        const long part = (tile.hi[split_dim] - tile.lo[split_dim]) / r;
        for (long k = 0; k < r; ++k) {
          const long lo = std::max(s.lo[split_dim], tile.lo[split_dim] + k * part);
          const long hi = std::min(s.hi[split_dim], tile.lo[split_dim] + (k + 1) * part);
          if (hi <= lo) continue;
          w.bytes = s.bytes * static_cast<double>(hi - lo) / static_cast<double>(s.hi[split_dim] - s.lo[split_dim]);
          w.receivers = {tile.replicas[k]};
          out.works.push_back(w);
        }
        break;
      }
    }
  }
  if (out.method == ReshardMethod::kLocalAllGather) {
    for (size_t t = 0; t < dst.tiles.size(); ++t) {
      if (dst.tiles[t].replicas.size() > 1) {
        out.gathers.push_back({static_cast<int>(t), dst.tiles[t].replicas, dst.tile_bytes(static_cast<int>(t))});
      }
    }
  }
  return out;
}

double network_bytes(const ReshardWorks& w, const std::vector<int>& sender, const Cluster& cluster) {
  double total = 0;
  for (size_t i = 0; i < w.works.size(); ++i) {
    const int from = cluster.gpus[sender[i]].domain;  // NVLink inside a domain: no network bytes
    std::set<int> hosts;
    for (int r : w.works[i].receivers) {
      if (cluster.gpus[r].domain != from) hosts.insert(cluster.gpus[r].domain);
    }
    total += w.works[i].bytes * static_cast<double>(hosts.size());
  }
  return total;
}

}  // namespace hetsim
