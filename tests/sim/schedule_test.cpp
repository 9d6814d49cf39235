// File: tests/sim/schedule_test.cpp
// Pipelined edges give the round groups of their definition; ring chains (grouped broadcasts and
// reductions held as n chains) and ring shifts (pairwise all-to-all) give the rounds, flows and
// estimates of the n(n-1) edges they stand for, bit for bit.
#include "sim/schedule.hpp"

#include <gtest/gtest.h>

#include <map>
#include <random>

#include "test_support.hpp"

namespace hetsim {
namespace {

// The edges of the chains, written out as one chain per member along the ring rotated to start
// at it (the layout of a chain broadcast or reduction), chain after chain.
Schedule expanded(const RingChains& c) {
  Schedule s;
  const int n = static_cast<int>(c.ring.size());
  for (int i = 0; i < n; ++i) {
    const int k = c.chunks[static_cast<size_t>(i)];
    if (k <= 0) continue;
    for (int p = 0; p + 1 < n; ++p) {
      const int a = c.ring[static_cast<size_t>((i + p) % n)], b = c.ring[static_cast<size_t>((i + p + 1) % n)];
      if (c.towards_root) s.edges.push_back({b, a, n - 2 - p, k, c.chunk_bytes[static_cast<size_t>(i)]});
      else s.edges.push_back({a, b, p, k, c.chunk_bytes[static_cast<size_t>(i)]});
    }
  }
  return s;
}

void expect_same_flows(const std::vector<Flow>& got, const std::vector<Flow>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t f = 0; f < got.size(); ++f) {
    EXPECT_EQ(got[f].src, want[f].src) << f;
    EXPECT_EQ(got[f].dst, want[f].dst) << f;
    EXPECT_EQ(got[f].bytes, want[f].bytes) << f;  // bit for bit: the same sums in the same order
  }
}

// Round groups of pipelined edges as the definition reads: sweep the rounds where an edge starts or
// stops, keep each GPU pair's bytes per round in a map (added and subtracted edge by edge, in
// edge order), and emit the map's pairs in order whenever the active set changes.
std::vector<RoundGroup> reference_round_groups(const Schedule& s) {
  std::map<int, std::vector<size_t>> starts, stops;
  for (size_t i = 0; i < s.edges.size(); ++i) {
    if (s.edges[i].chunks <= 0) continue;
    starts[s.edges[i].offset].push_back(i);
    stops[s.edges[i].offset + s.edges[i].chunks].push_back(i);
  }
  std::map<std::pair<int, int>, std::pair<double, int>> active;  // bytes, edges
  std::vector<RoundGroup> out;
  int open = -1;
  for (int r = 0; r <= s.rounds(); ++r) {
    if (!starts.contains(r) && !stops.contains(r)) continue;
    if (open >= 0 && !active.empty()) {
      RoundGroup g{open, r - open, {}};
      for (const auto& [pair, a] : active) g.flows.push_back({pair.first, pair.second, a.first});
      out.push_back(g);
    }
    for (size_t i : stops[r]) {
      auto it = active.find({s.edges[i].src, s.edges[i].dst});
      if (--it->second.second == 0) active.erase(it);
      else it->second.first -= s.edges[i].chunk_bytes;
    }
    for (size_t i : starts[r]) {
      auto& a = active[{s.edges[i].src, s.edges[i].dst}];
      a.first += s.edges[i].chunk_bytes;
      ++a.second;
    }
    open = r;
  }
  return out;
}

TEST(PipeEdges, RoundGroupsAreThoseOfTheDefinitionBitForBit) {
  // Random edges over few GPUs (so pairs repeat, pairs start and stop in the same round, a pair
  // ends and starts again at once), with chunk sizes whose sums round differently by order.
  std::mt19937 rng(20261126);
  for (int trial = 0; trial < 300; ++trial) {
    Schedule s;
    const int gpus = 2 + trial % 6, n = 1 + static_cast<int>(rng() % 60);
    for (int e = 0; e < n; ++e) {
      const int src = static_cast<int>(rng() % gpus);
      const int dst = (src + 1 + static_cast<int>(rng() % (gpus - 1))) % gpus;
      s.edges.push_back({src, dst, static_cast<int>(rng() % 12), static_cast<int>(rng() % 6), 0.1 * (1 + rng() % 1000) / 3.0});
    }
    SCOPED_TRACE("trial " + std::to_string(trial));
    const std::vector<RoundGroup> got = round_groups(s), want = reference_round_groups(s);
    ASSERT_EQ(got.size(), want.size());
    for (size_t g = 0; g < got.size(); ++g) {
      EXPECT_EQ(got[g].first, want[g].first);
      EXPECT_EQ(got[g].count, want[g].count);
      expect_same_flows(got[g].flows, want[g].flows);
    }
  }
}

// Rings of 2 to 32 of the a100-v100-2x2 GPUs, out of GPU order (so that pair order differs from
// ring order) but the last.
const std::vector<std::vector<int>> kRings = {{3, 17}, {5, 0, 9}, {12, 3, 30, 8, 21}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
                                                                                    16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31}};

TEST(RingChains, GiveTheRoundsFlowsAndEstimatesOfTheirEdges) {
  const Cluster cluster = test::shipped_cluster("a100-v100-2x2");
  const Fabric fabric(cluster);
  // Rings out of GPU order (so that pair order differs from ring order), chunk counts that differ
  // between chains (uneven shards), an absent chain, both directions.
  for (const std::vector<int>& ring : kRings) {
    for (bool towards_root : {false, true}) {
      const int n = static_cast<int>(ring.size());
      RingChains c;
      c.ring = ring;
      c.towards_root = towards_root;
      for (int i = 0; i < n; ++i) {
        const int k = i == 1 && n > 2 ? 0 : 1 + (i * 7) % 5;  // chain 1 absent where others remain
        c.chunks.push_back(k);
        c.chunk_bytes.push_back(k > 0 ? (1.0 + 0.1 * i) * 3e6 / k : 0.0);
      }
      SCOPED_TRACE("n=" + std::to_string(n) + (towards_root ? " towards the root" : " from the root"));
      Schedule chains;
      chains.chains = c;
      const Schedule edges = expanded(c);
      EXPECT_EQ(chains.rounds(), edges.rounds());
      const std::vector<RoundGroup> got = round_groups(chains), want = round_groups(edges);
      ASSERT_EQ(got.size(), want.size());
      for (size_t g = 0; g < got.size(); ++g) {
        SCOPED_TRACE("group " + std::to_string(g));
        EXPECT_EQ(got[g].first, want[g].first);
        EXPECT_EQ(got[g].count, want[g].count);
        expect_same_flows(got[g].flows, want[g].flows);
      }
      expect_same_flows(merged_flows(chains), merged_flows(edges));
      const ScheduleEstimate a = estimate(chains, fabric), b = estimate(edges, fabric);
      EXPECT_EQ(a.step_s, b.step_s);
      EXPECT_EQ(a.phase_s, b.phase_s);
      EXPECT_GT(a.step_s, 0);
    }
  }
}

TEST(RingChains, AlikeChainsGiveTheEstimateOfTheirEdgesFromOnePairsRounds) {
  // Every chain the same chunks (an even all-gather or reduce-scatter): the estimate is made from
  // one ring pair's bytes per round, bit for bit that of the edges, pipelines shorter and longer
  // than the ring, bytes whose adding and removing round (3e6 / 7 per chunk).
  const Cluster cluster = test::shipped_cluster("a100-v100-2x2");
  const Fabric fabric(cluster);
  for (const std::vector<int>& ring : kRings) {
    for (int k : {1, 2, 5, 40}) {
      for (bool towards_root : {false, true}) {
        RingChains c;
        c.ring = ring;
        c.towards_root = towards_root;
        c.chunks.assign(ring.size(), k);
        c.chunk_bytes.assign(ring.size(), 3e6 / 7);
        SCOPED_TRACE("n=" + std::to_string(ring.size()) + " k=" + std::to_string(k) + (towards_root ? " towards the root" : ""));
        Schedule chains;
        chains.chains = c;
        EXPECT_EQ(step_estimate(chains, fabric), step_estimate(expanded(c), fabric));
        EXPECT_GT(step_estimate(chains, fabric), 0);
      }
    }
  }
}

TEST(RingShifts, GiveTheRoundsFlowsAndEstimatesOfTheirEdges) {
  const Cluster cluster = test::shipped_cluster("a100-v100-2x2");
  const Fabric fabric(cluster);
  for (const std::vector<int>& ring : std::vector<std::vector<int>>{{3, 17}, {5, 0, 9}, {12, 3, 30, 8, 21, 0, 16}}) {
    SCOPED_TRACE("n=" + std::to_string(ring.size()));
    const int n = static_cast<int>(ring.size());
    Schedule shifts;
    shifts.shifts = {ring, 7.3e6 / n};
    Schedule edges;  // the pairwise exchange written out: step k, every member to the one k places on
    for (int step = 1; step < n; ++step) {
      for (int r = 0; r < n; ++r) edges.edges.push_back({ring[r], ring[(r + step) % n], step - 1, 1, 7.3e6 / n});
    }
    EXPECT_EQ(shifts.rounds(), edges.rounds());
    const std::vector<RoundGroup> got = round_groups(shifts), want = round_groups(edges);
    ASSERT_EQ(got.size(), want.size());
    for (size_t g = 0; g < got.size(); ++g) {
      EXPECT_EQ(got[g].first, want[g].first);
      EXPECT_EQ(got[g].count, want[g].count);
      expect_same_flows(got[g].flows, want[g].flows);
    }
    expect_same_flows(merged_flows(shifts), merged_flows(edges));
    EXPECT_EQ(estimate(shifts, fabric).step_s, estimate(edges, fabric).step_s);
    EXPECT_EQ(estimate(shifts, fabric).phase_s, estimate(edges, fabric).phase_s);
  }
}

TEST(RingShifts, ManyMembersArePricedOnAllCoresToTheSameSum) {
  // From 256 members the rounds are priced on the machine's cores at once and added in order:
  // the estimate of the edges they stand for, bit for bit (a ring out of GPU order, 320 GPUs).
  Cluster cluster = test::shipped_cluster("a100-8x8");
  cluster.node_types[0].count = 40;
  index_gpus(cluster);
  const Fabric fabric(cluster);
  std::vector<int> ring(320);
  for (int i = 0; i < 320; ++i) ring[static_cast<size_t>(i)] = (i * 37) % 320;
  const int n = static_cast<int>(ring.size());
  Schedule shifts;
  shifts.shifts = {ring, 7.3e6 / n};
  Schedule edges;
  for (int step = 1; step < n; ++step) {
    for (int r = 0; r < n; ++r) edges.edges.push_back({ring[r], ring[(r + step) % n], step - 1, 1, 7.3e6 / n});
  }
  EXPECT_EQ(step_estimate(shifts, fabric), step_estimate(edges, fabric));
  EXPECT_EQ(step_estimate(shifts, fabric), step_estimate(shifts, fabric));
}

TEST(Schedule, HoldsOneOfEdgesChainsAndShifts) {
  Schedule s;
  s.chains = {{0, 1, 2}, {1, 1, 1}, {1e6, 1e6, 1e6}, false};
  s.edges.push_back({0, 1, 0, 1, 1e6});
  EXPECT_THROW((void)round_groups(s), std::logic_error);
  EXPECT_THROW((void)merged_flows(s), std::logic_error);
  s.edges.clear();
  s.shifts = {{0, 1, 2}, 1e6};
  EXPECT_THROW((void)round_groups(s), std::logic_error);
}

}  // namespace
}  // namespace hetsim
