// File: planner/hybrid/stage_boundary.cpp
#include "planner/hybrid/stage_boundary.hpp"

#include <algorithm>

namespace hetsim {

MeshLayout boundary_layout(const Replica& r, long micro_batch, bool sequence_parallel, long units, double element_bytes) {
  MeshLayout l;
  l.shape = {micro_batch, units};
  l.element_bytes = element_bytes;
  // Context parallelism: CP rank c (TP group c of the copy) holds the c-th of cp sequence slices
  // (the zig-zag of causal balancing only reorders them).
  const long cp = std::max(1, r.cp);
  const long tp = static_cast<long>(r.devices.size()) / cp;
  for (long c = 0; c < cp; ++c) {
    const long lo = c * units / cp, hi = (c + 1) * units / cp;
    const auto first = r.devices.begin() + c * tp;
    if (sequence_parallel && tp > 1) {
      for (long k = 0; k < tp; ++k) {
        l.tiles.push_back({{r.first_sample, lo + k * (hi - lo) / tp}, {r.first_sample + r.samples, lo + (k + 1) * (hi - lo) / tp},
                           {first[k]}});
      }
    } else {
      l.tiles.push_back({{r.first_sample, lo}, {r.first_sample + r.samples, hi}, std::vector<int>(first, first + tp)});
    }
  }
  return l;
}

void offer_matching_ranks_first(ReshardWorks& w, const MeshLayout& from, const MeshLayout& into) {
  const std::vector<int>& ranks = from.tiles.front().replicas;
  const long src_tp = static_cast<long>(ranks.size());
  for (ReshardWork& work : w.works) {
    if (work.receivers.size() != 1 || work.senders.size() < 2) continue;
    const std::vector<int>& dst_ranks = into.tiles[w.slices[work.slice].dst_tile].replicas;
    const long k = std::find(dst_ranks.begin(), dst_ranks.end(), work.receivers.front()) - dst_ranks.begin();
    const int matched = ranks[static_cast<size_t>(k % src_tp)];
    if (auto it = std::find(work.senders.begin(), work.senders.end(), matched); it != work.senders.end()) {
      std::rotate(work.senders.begin(), it, work.senders.end());
    }
  }
}

}  // namespace hetsim
