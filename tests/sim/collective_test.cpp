// File: tests/sim/collective_test.cpp
// Collectives simulated in SimGrid against their closed forms.
#include "sim/collective.hpp"

#include <gtest/gtest.h>

#include "sim/executor.hpp"
#include "test_support.hpp"

namespace hetsim {
namespace {

double simulate_allreduce(const Cluster& c, std::vector<int> group, double bytes, Fidelity f) {
  Program p;
  p.devices.resize(c.gpu_count());
  CollectiveTask t = collective(CollectiveOp::kAllReduce, std::move(group), bytes);
  t.algorithm = Algorithm::kRing;
  p.add({"ar", t, {}});
  return simulate(p, c, SimOptions{f}).iteration_time_s;
}

class RingAllReduce : public ::testing::TestWithParam<Fidelity> {
 protected:
  Cluster cluster_ = load_cluster(test::shipped("topologies", "a100-8x8"));
};

TEST_P(RingAllReduce, MatchesAlphaBetaInsideANode) {
  // 8 GPUs behind NVSwitch: every edge crosses two 300 GB/s ports, alpha = 1 us.
  // Expected: 2(n-1)/n * S/B + 2(n-1) * alpha.
  const double s = 1 << 30;
  const double expect = ring_allreduce_time(8, s, 300e9, 1e-6);
  EXPECT_NEAR(simulate_allreduce(cluster_, {0, 1, 2, 3, 4, 5, 6, 7}, s, GetParam()) / expect, 1.0, 0.005);
}

TEST_P(RingAllReduce, MatchesAlphaBetaAcrossNodes) {
  // One GPU per node: every edge is NIC (25 GB/s) + switch; alpha = 2 us + 1 us + 2 us.
  const double s = 256.0 * (1 << 20);
  const double expect = ring_allreduce_time(8, s, 25e9, 5e-6);
  EXPECT_NEAR(simulate_allreduce(cluster_, {0, 8, 16, 24, 32, 40, 48, 56}, s, GetParam()) / expect, 1.0, 0.005);
}

TEST_P(RingAllReduce, SlowestEdgeBoundsAMixedRing) {
  // All 64 GPUs in order: intra-node edges are fast, the 8 inter-node edges (25 GB/s, 5 us)
  // bound every step.
  const double s = 1 << 30;
  const double expect = ring_allreduce_time(64, s, 25e9, 5e-6);
  std::vector<int> all(64);
  for (int i = 0; i < 64; ++i) all[i] = i;
  EXPECT_NEAR(simulate_allreduce(cluster_, all, s, GetParam()) / expect, 1.0, 0.005);
}

INSTANTIATE_TEST_SUITE_P(Fidelities, RingAllReduce, ::testing::Values(Fidelity::kPhase, Fidelity::kStep),
                         [](const auto& info) { return std::string(fidelity_name(info.param)); });

TEST(RingAllReduce, SmallMessagesAreLatencyBound) {
  const Cluster c = load_cluster(test::shipped("topologies", "a100-8x8"));
  const double expect = ring_allreduce_time(8, 1024, 25e9, 5e-6);  // ~70 us, nearly all latency
  EXPECT_NEAR(simulate_allreduce(c, {0, 8, 16, 24, 32, 40, 48, 56}, 1024, Fidelity::kStep) / expect, 1.0, 0.005);
}

}  // namespace
}  // namespace hetsim
