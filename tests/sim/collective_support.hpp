// File: tests/sim/collective_support.hpp
// What the collective tests share: a collective task with its algorithm, its simulated time on an
// otherwise idle cluster, GPU index ranges, and the link rates of the a100-8x8 fixture they write
// their closed forms with.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "sim/collective.hpp"
#include "sim/executor.hpp"
#include "topologies/link_class.hpp"

namespace hetsim::test {

inline CollectiveTask task(CollectiveOp op, std::vector<int> group, double bytes, Algorithm a) {
  CollectiveTask t = collective(op, std::move(group), bytes);
  t.algorithm = a;
  if (op == CollectiveOp::kBroadcast || op == CollectiveOp::kReduce) t.root = t.group.front();
  return t;
}

inline double run(const Cluster& c, const std::vector<CollectiveTask>& tasks, Fidelity f = Fidelity::kPhase) {
  Program p;
  p.devices.resize(c.gpu_count());
  for (const CollectiveTask& t : tasks) p.add({"c", t, {}});
  return simulate(p, c, SimOptions{f, false}).iteration_time_s;
}
inline double run(const Cluster& c, const CollectiveTask& t, Fidelity f = Fidelity::kPhase) {
  return run(c, std::vector<CollectiveTask>{t}, f);
}

inline std::vector<int> range(int first, int count, int stride = 1) {
  std::vector<int> v;
  for (int i = 0; i < count; ++i) v.push_back(first + i * stride);
  return v;
}

inline int chunks(double bytes) { return std::max(1, static_cast<int>(std::ceil(bytes / kPipelineChunkBytes))); }

// Achievable fraction of a link class (topologies/link_class.hpp): links run at wire x fraction.
inline double fraction(LinkClass c) { return achievable_table()[static_cast<int>(c)].fraction; }

// a100-8x8, one GPU per node: every edge is PCIe (32 GB/s) -> NIC (25 GB/s) -> switch -> NIC -> PCIe;
// at their fractions (0.8 x 32 > 0.92 x 25) the NIC is the bottleneck.
inline const double kNicBw = 25e9 * fraction(LinkClass::kNic);
inline const double kNvlink3Bw = 300e9 * fraction(LinkClass::kNvlink3);
inline constexpr double kNicAlpha = 5e-6;  // 2 us NIC + 1 us switch + 2 us NIC
inline constexpr double kGiB = 1024.0 * 1024 * 1024;

}  // namespace hetsim::test
