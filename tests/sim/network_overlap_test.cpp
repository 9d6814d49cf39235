// File: tests/sim/network_overlap_test.cpp
// Network tasks that run alone on their links: found as stated, and simulated once per kind with
// the times of simulating every one.
#include "sim/network_overlap.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <random>
#include <tuple>

#include "planner/hybrid/pipeline_builder.hpp"
#include "sim/executor.hpp"
#include "test_support.hpp"

namespace hetsim {
namespace {

CollectiveTask on_stream(CollectiveTask c, CommStream s) {
  c.stream = s;
  return c;
}

TEST(NetworkOverlap, ATaskIsAloneWhereEveryTaskCrossingItsLinksSharesAStreamWithIt) {
  Program p;
  p.devices.resize(8);
  const int a = p.add({"tp.a", on_stream(collective(CollectiveOp::kAllReduce, {0, 1}, 1), CommStream::kTensor), {}});
  const int b = p.add({"tp.b", on_stream(collective(CollectiveOp::kAllReduce, {0, 1}, 1), CommStream::kTensor), {}});
  const int c = p.add({"send", SendTask{2, 3, 1}, {}});
  const int d = p.add({"tp.d", on_stream(collective(CollectiveOp::kAllGather, {4, 5}, 1), CommStream::kTensor), {}});
  const int e = p.add({"dp.e", collective(CollectiveOp::kAllReduce, {4, 5}, 1), {}});
  const int k = p.add({"kernel", ComputeTask{6, 1}, {}});
  const std::vector<int> ab{1, 2}, send{2, 3}, dl{5}, el{6};
  std::vector<const std::vector<int>*> links(p.tasks.size(), nullptr);
  links[a] = &ab;
  links[b] = &ab;
  links[c] = &send;  // crosses link 2 with a and b, from GPU 2's pipeline stream: all three may overlap
  links[d] = &dl;    // alone on link 5
  links[e] = &el;    // the same GPUs on another stream, but other links: alone
  const std::vector<char> alone = alone_on_links(p, 8, links);
  EXPECT_FALSE(alone[a]);
  EXPECT_FALSE(alone[b]);
  EXPECT_FALSE(alone[c]);
  EXPECT_TRUE(alone[d]);
  EXPECT_TRUE(alone[e]);
  EXPECT_FALSE(alone[k]);

  links[c] = &el;  // the send elsewhere: a and b share GPU 0's and 1's TP streams, so one waits for the other
  const std::vector<char> apart = alone_on_links(p, 8, links);
  EXPECT_TRUE(apart[a]);
  EXPECT_TRUE(apart[b]);
  EXPECT_FALSE(apart[c]);  // link 6 with e, on other streams
  EXPECT_FALSE(apart[e]);
}

TEST(NetworkOverlap, SharedLinksLeaveFatPipesOut) {
  const Cluster cluster = test::shipped_cluster("a100-8x8");
  const Fabric fabric(cluster);
  SharedLinks shared(fabric);
  const std::vector<int> links = shared.of({{0, 9, 1e6}, {0, 9, 2e6}, {1, 2, 0}});  // a flow of no bytes crosses nothing
  ASSERT_FALSE(links.empty());
  EXPECT_TRUE(std::is_sorted(links.begin(), links.end()));
  EXPECT_EQ(std::adjacent_find(links.begin(), links.end()), links.end());
  for (int l : links) EXPECT_TRUE(fabric.links()[static_cast<size_t>(l)].shared) << fabric.links()[static_cast<size_t>(l)].name;
  size_t all_shared = 0;
  for (int l : fabric.route(0, 9).links) all_shared += fabric.links()[static_cast<size_t>(l)].shared ? 1 : 0;
  EXPECT_EQ(links.size(), all_shared);
}

// Repeated TP all-reduces on node 0's eight GPUs between kernels; with `beside`, a data-parallel
// all-reduce over the same GPUs runs on their data streams meanwhile, crossing the same NVLink ports.
Program tensor_parallel_steps(bool beside) {
  Program p;
  p.devices.resize(64);
  const std::vector<int> node{0, 1, 2, 3, 4, 5, 6, 7};
  int last = -1;
  for (int step = 0; step < 6; ++step) {
    const int k = p.add({"kernel", ComputeTask{0, 1e-3, 0, 0, {1, 2, 3, 4, 5, 6, 7}}, last < 0 ? std::vector<int>{} : std::vector<int>{last}});
    last = p.add({"tp", on_stream(collective(CollectiveOp::kAllReduce, node, 64e6), CommStream::kTensor), {k}});
  }
  if (beside) p.add({"dp", collective(CollectiveOp::kAllReduce, node, 512e6), {}});
  return p;
}

TEST(NetworkOverlap, CollectivesAloneOnTheirLinksAreSimulatedOnceWithTheTimesOfEveryOne) {
  const Cluster cluster = test::shipped_cluster("a100-8x8");
  SimOptions every;
  every.every_collective = true;
  for (const bool beside : {false, true}) {
    const Program p = tensor_parallel_steps(beside);
    const SimResult reused = simulate(p, cluster);
    const SimResult all = simulate(p, cluster, every);
    ASSERT_EQ(reused.tasks.size(), all.tasks.size());
    if (beside) {  // nothing alone: every collective simulated, bit for bit as before
      EXPECT_EQ(reused.activities, all.activities);
      for (size_t t = 0; t < all.tasks.size(); ++t) {
        EXPECT_EQ(reused.tasks[t].start_s, all.tasks[t].start_s) << t;
        EXPECT_EQ(reused.tasks[t].end_s, all.tasks[t].end_s) << t;
      }
    } else {
      EXPECT_LT(reused.activities, all.activities);
      for (size_t t = 0; t < all.tasks.size(); ++t) EXPECT_NEAR(reused.tasks[t].end_s, all.tasks[t].end_s, 1e-12 * all.iteration_time_s) << t;
    }
  }
}

TEST(NetworkOverlap, ATracedRunRecordsTheFlowsOfCollectivesTimedFromAnother) {
  // A traced run (record_flows) times a repeated collective from the first one, as an untraced run
  // does, and records its flows moved in time: the same legs at the same moments as with every
  // collective simulated. Once with the TP all-reduces alone in the program (data-parallel-like,
  // communications in sequence), once beside a send between two other nodes.
  const Cluster cluster = test::shipped_cluster("a100-8x8");
  for (const bool send_beside : {false, true}) {
    Program p = tensor_parallel_steps(false);
    if (send_beside) p.add({"send", SendTask{8, 16, 256e6}, {}});
    SimOptions traced;
    traced.record_flows = true;
    SimOptions every = traced;
    every.every_collective = true;
    const SimResult untraced = simulate(p, cluster);
    const SimResult reused = simulate(p, cluster, traced);
    const SimResult all = simulate(p, cluster, every);
    EXPECT_LT(reused.activities, all.activities) << send_beside;
    EXPECT_EQ(reused.activities, untraced.activities) << send_beside;
    ASSERT_EQ(reused.tasks.size(), untraced.tasks.size());
    for (size_t t = 0; t < reused.tasks.size(); ++t) {
      EXPECT_EQ(reused.tasks[t].start_s, untraced.tasks[t].start_s) << t;
      EXPECT_EQ(reused.tasks[t].end_s, untraced.tasks[t].end_s) << t;
    }
    auto sorted = [](std::vector<FlowRecord> f) {
      std::sort(f.begin(), f.end(), [](const FlowRecord& a, const FlowRecord& b) {
        return std::tie(a.src_endpoint, a.dst_endpoint, a.start_s) < std::tie(b.src_endpoint, b.dst_endpoint, b.start_s);
      });
      return f;
    };
    const std::vector<FlowRecord> got = sorted(reused.flows), want = sorted(all.flows);
    ASSERT_EQ(got.size(), want.size()) << send_beside;
    EXPECT_GE(got.size(), 6u * 8u) << send_beside;  // six all-reduces over 8 GPUs: a ring's 8 pairs each at least
    const double eps = 1e-12 * all.iteration_time_s;
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].src_endpoint, want[i].src_endpoint) << i;
      EXPECT_EQ(got[i].dst_endpoint, want[i].dst_endpoint) << i;
      EXPECT_EQ(got[i].bytes, want[i].bytes) << i;
      EXPECT_NEAR(got[i].start_s, want[i].start_s, eps) << i;
      EXPECT_NEAR(got[i].end_s, want[i].end_s, eps) << i;
    }
  }
}

TEST(NetworkOverlap, AHybridPlanTakesTheTimesOfEveryCollectiveSimulated) {
  // GPT-3 175B as TP 8 x PP 4 x DP 2 on 64 A100: its TP collectives run alone on their nodes'
  // NVLink ports; its pipeline sends and gradient collectives share the NICs.
  const ModelSpec m = load_model(test::shipped("workloads", "gpt3-175b"));
  const Cluster c = test::shipped_cluster("selene-64");
  HybridPlan plan;
  plan.recompute = RecomputeMode::kFull;
  const int layers = static_cast<int>(m.layers);
  for (int d = 0; d < 2; ++d) {
    PipelinePlan pl;
    pl.micro_batches = 16;
    for (int s = 0; s < 4; ++s) {
      StagePlan st;
      st.tp = 8;
      for (int k = 0; k < 8; ++k) st.devices.push_back((s * 2 + d) * 8 + k);
      st.chunks = {{s * layers / 4, (s + 1) * layers / 4 - 1}};
      pl.stages.push_back(st);
    }
    plan.pipelines.push_back(pl);
  }
  PipelineProgramBuilder builder(m, c, CostModel{});
  const Program p = builder.build(plan).program;
  SimOptions every;
  every.every_collective = true;
  const SimResult reused = simulate(p, c);
  const SimResult all = simulate(p, c, every);
  EXPECT_LT(reused.activities, all.activities / 2);
  EXPECT_NEAR(reused.iteration_time_s / all.iteration_time_s, 1.0, 1e-12);
  ASSERT_EQ(reused.tasks.size(), all.tasks.size());
  for (size_t t = 0; t < all.tasks.size(); ++t) {
    EXPECT_NEAR(reused.tasks[t].start_s, all.tasks[t].start_s, 1e-12 * all.iteration_time_s) << p.tasks[t].label;
    EXPECT_NEAR(reused.tasks[t].end_s, all.tasks[t].end_s, 1e-12 * all.iteration_time_s) << p.tasks[t].label;
  }
  for (size_t d = 0; d < all.devices.size(); ++d) EXPECT_DOUBLE_EQ(reused.devices[d].peak_memory_bytes, all.devices[d].peak_memory_bytes) << d;
}

// A random program on `c`: kernels (some mirrored inside a node), sends and collectives drawn from
// a few kinds (node-local and cross-node groups, on TP, data and expert streams, of three sizes) so
// that identical collectives repeat, each task after up to two random earlier ones.
Program random_program(const Cluster& c, std::mt19937_64& rng) {
  std::map<int, std::vector<int>> node_gpus;
  for (int g = 0; g < c.gpu_count(); ++g) node_gpus[c.gpus[static_cast<size_t>(g)].node].push_back(g);
  std::vector<std::vector<int>> nodes;
  for (auto& [n, gpus] : node_gpus) nodes.push_back(gpus);
  const auto pick = [&rng](size_t n) { return static_cast<size_t>(std::uniform_int_distribution<size_t>(0, n - 1)(rng)); };
  std::vector<CollectiveTask> kinds;
  for (int k = 0; k < 6; ++k) {
    std::vector<int> group;
    if (k % 2 == 0) {  // inside one node: all of it or its first half
      const std::vector<int>& n = nodes[pick(nodes.size())];
      group.assign(n.begin(), n.begin() + static_cast<std::ptrdiff_t>(k % 4 == 0 ? n.size() : std::max<size_t>(2, n.size() / 2)));
    } else {  // across nodes: one GPU of each of the first nodes, on one rail
      const size_t rail = pick(nodes.front().size());
      for (const std::vector<int>& n : nodes) group.push_back(n[std::min(rail, n.size() - 1)]);
    }
    const CollectiveOp op = std::array{CollectiveOp::kAllReduce, CollectiveOp::kAllGather, CollectiveOp::kReduceScatter}[pick(3)];
    const CommStream stream = std::array{CommStream::kTensor, CommStream::kData, CommStream::kExpert}[pick(3)];
    kinds.push_back(on_stream(collective(op, group, std::array{1e6, 16e6, 64e6}[pick(3)]), stream));
  }
  Program p;
  p.devices.resize(static_cast<size_t>(c.gpu_count()));
  for (int t = 0; t < 60; ++t) {
    std::vector<int> deps;
    for (size_t d = pick(3); d > 0 && t > 0; --d) deps.push_back(static_cast<int>(pick(static_cast<size_t>(t))));
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    const size_t what = pick(4);
    if (what == 0) {
      const std::vector<int>& n = nodes[pick(nodes.size())];
      ComputeTask k{n.front(), 1e-4 * static_cast<double>(1 + pick(20))};
      if (pick(2) == 0) k.mirrors.assign(n.begin() + 1, n.end());
      p.add({"kernel", k, deps});
    } else if (what == 1) {
      const int src = static_cast<int>(pick(static_cast<size_t>(c.gpu_count())));
      int dst = static_cast<int>(pick(static_cast<size_t>(c.gpu_count())));
      if (dst == src) dst = (src + 1) % c.gpu_count();
      p.add({"send", SendTask{src, dst, 8e6, pick(2) == 0 ? CommStream::kPipeline : CommStream::kPipelineBack}, deps});
    } else {
      p.add({"collective", kinds[pick(kinds.size())], deps});
    }
  }
  return p;
}

TEST(NetworkOverlap, RandomProgramsTakeTheTimesOfEveryCollectiveSimulated) {
  // The property behind the rule: whatever the program, a collective timed from an identical one
  // (alone on its links) ends when simulating it flow by flow would have, at either fidelity.
  // Seeded; the seed and program are in every failure's message. Mixed vendors stage their
  // cross-vendor flows.
  constexpr uint64_t kSeed = 20261129;
  std::mt19937_64 rng(kSeed);
  int reused_runs = 0;
  for (const char* name : {"a100-8x8", "a100-mi250x"}) {
    const Cluster c = test::shipped_cluster(name);
    for (int i = 0; i < 40; ++i) {
      const Program p = random_program(c, rng);
      SimOptions o;
      o.fidelity = i % 2 == 0 ? Fidelity::kPhase : Fidelity::kStep;
      SimOptions every = o;
      every.every_collective = true;
      const SimResult reused = simulate(p, c, o);
      const SimResult all = simulate(p, c, every);
      ASSERT_EQ(reused.tasks.size(), all.tasks.size());
      reused_runs += reused.activities < all.activities ? 1 : 0;
      for (size_t t = 0; t < all.tasks.size(); ++t) {
        ASSERT_NEAR(reused.tasks[t].end_s, all.tasks[t].end_s, 1e-12 * all.iteration_time_s)
            << name << ", program " << i << " (seed " << kSeed << ", " << fidelity_name(o.fidelity) << " fidelity), task " << t << " "
            << p.tasks[t].label;
      }
    }
  }
  EXPECT_GT(reused_runs, 40);  // of 80: the rule did find collectives alone, not only programs with none
}

}  // namespace
}  // namespace hetsim
