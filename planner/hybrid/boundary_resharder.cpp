// File: planner/hybrid/boundary_resharder.cpp
#include "planner/hybrid/boundary_resharder.hpp"

#include <functional>

#include "planner/hybrid/stage_boundary.hpp"

namespace hetsim {

namespace {

// Nodes of the order search per resharding inside a program (each is small: a few slices).
constexpr long kOrderExpansions = 2000;

size_t layout_hash(const MeshLayout& m) {
  size_t h = std::hash<double>{}(m.element_bytes);
  const auto mix = [&h](long v) { h = h * 1000003u ^ static_cast<size_t>(v); };
  for (long v : m.shape) mix(v);
  for (const Tile& t : m.tiles) {
    for (long v : t.lo) mix(v);
    for (long v : t.hi) mix(v);
    for (int r : t.replicas) mix(r);
  }
  return h;
}

}  // namespace

const BoundaryResharder::Moves& BoundaryResharder::moves(const MeshLayout& from, const MeshLayout& into) {
  // The senders' loads are read only to balance: without balancing, the same layouts give the
  // same works and schedule.
  const bool same_each_time = choice_.load_balance == LoadBalance::kNone;
  std::vector<Moves>* bucket = nullptr;
  if (same_each_time) {
    bucket = &known_[layout_hash(from) * 31 + layout_hash(into)];
    for (const Moves& m : *bucket) {
      if (m.from == from && m.into == into) return m;
    }
  }
  Moves m{from, into, make_works(from, into, choice_.method, cluster_), {}};
  offer_matching_ranks_first(m.works, from, into);
  OrderOptions opt;
  opt.seed = choice_.seed;
  opt.max_expansions = kOrderExpansions;
  m.schedule = schedule_works(m.works, cluster_, choice_.load_balance, loads_, opt);
  if (bucket == nullptr) {
    last_ = std::move(m);
    return last_;
  }
  bucket->push_back(std::move(m));
  return bucket->back();
}

}  // namespace hetsim
