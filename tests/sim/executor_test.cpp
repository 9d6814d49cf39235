// File: tests/sim/executor_test.cpp
// The executor: streams, dependencies, overlap, memory, and link sharing.
#include "sim/executor.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <tuple>

#include "sim/report.hpp"
#include "test_support.hpp"
#include "topologies/link_class.hpp"

namespace hetsim {
namespace {

class Executor : public ::testing::Test {
 protected:
  Cluster cluster_ = load_cluster(test::shipped("topologies", "a100-8x8"));
  Program program() const {
    Program p;
    p.devices.resize(cluster_.gpu_count());
    return p;
  }
};

TEST_F(Executor, ComputeStreamIsSequential) {
  Program p = program();
  p.add({"a", ComputeTask{0, 0.25, 0, 0}, {}});
  p.add({"b", ComputeTask{0, 0.5, 0, 0}, {}});
  p.add({"c", ComputeTask{1, 0.1, 0, 0}, {}});
  const SimResult r = simulate(p, cluster_);
  EXPECT_NEAR(r.iteration_time_s, 0.75, 1e-9);
  EXPECT_NEAR(r.tasks[1].start_s, 0.25, 1e-9);
  EXPECT_NEAR(r.tasks[2].end_s, 0.1, 1e-9);  // another GPU runs in parallel
  EXPECT_NEAR(r.devices[0].compute_s, 0.75, 1e-9);
}

TEST_F(Executor, DependenciesAcrossDevicesAreHonoured) {
  Program p = program();
  const int a = p.add({"a", ComputeTask{0, 0.3, 0, 0}, {}});
  p.add({"b", ComputeTask{1, 0.2, 0, 0}, {a}});
  const SimResult r = simulate(p, cluster_);
  EXPECT_NEAR(r.tasks[1].start_s, 0.3, 1e-9);
  EXPECT_NEAR(r.iteration_time_s, 0.5, 1e-9);
}

TEST_F(Executor, CommunicationOverlapsCompute) {
  // A collective depending on the first compute task runs while the second computes.
  Program p = program();
  const int a0 = p.add({"a0", ComputeTask{0, 0.1, 0, 0}, {}});
  const int a1 = p.add({"a1", ComputeTask{1, 0.1, 0, 0}, {}});
  p.add({"b0", ComputeTask{0, 0.2, 0, 0}, {}});
  p.add({"b1", ComputeTask{1, 0.2, 0, 0}, {}});
  p.add({"ar", collective(CollectiveOp::kAllReduce, {0, 1}, 1e9), {a0, a1}});
  const SimResult r = simulate(p, cluster_);
  const double ar = r.tasks[4].end_s - r.tasks[4].start_s;
  EXPECT_NEAR(r.tasks[4].start_s, 0.1, 1e-9);
  EXPECT_NEAR(r.iteration_time_s, std::max(0.3, 0.1 + ar), 1e-9);
  EXPECT_LT(r.iteration_time_s, 0.3 + ar);
}

TEST(ExecutorSharing, SendsThroughOneNicShareItsBandwidth) {
  // DGX-1 V100 nodes have 4 NICs for 8 GPUs: GPUs 16 and 20 (locals 0 and 4) share NIC 0
  // (100 Gb/s = 12.5 GB/s). Path latency: 2 us NIC + 1 us switch + 2 us NIC.
  const Cluster c = load_cluster(test::shipped("topologies", "a100-v100-2x2"));
  Program one;
  one.devices.resize(c.gpu_count());
  one.add({"s1", SendTask{16, 0, 1e9}, {}});
  Program two = one;
  two.add({"s2", SendTask{20, 8, 1e9}, {}});
  // Alone: 5 us + 1 GB / (12.5 GB/s x the NIC's achievable fraction). Together: each gets half.
  const double nic = 12.5e9 * nic_achievable(c.node_types[1]).fraction;
  EXPECT_NEAR(simulate(one, c).iteration_time_s, 5e-6 + 1e9 / nic, 1e-9);
  EXPECT_NEAR(simulate(two, c).iteration_time_s, 5e-6 + 2e9 / nic, 1e-9);
}

TEST(ExecutorSharing, MirroredSendsEqualSeparateSends) {
  // One task carrying three transfers runs them together, exactly like three tasks on three
  // senders' streams: two of them share NIC 0, the third has NIC 1 to itself.
  const Cluster c = load_cluster(test::shipped("topologies", "a100-v100-2x2"));
  Program separate;
  separate.devices.resize(c.gpu_count());
  separate.add({"s1", SendTask{16, 0, 1e9}, {}});
  separate.add({"s2", SendTask{20, 8, 1e9}, {}});
  separate.add({"s3", SendTask{17, 1, 1e9}, {}});
  Program mirrored;
  mirrored.devices.resize(c.gpu_count());
  SendTask send{16, 0, 1e9};
  send.mirrors = {{20, 8}, {17, 1}};
  mirrored.add({"s", send, {}});
  const SimResult a = simulate(separate, c);
  const SimResult b = simulate(mirrored, c);
  EXPECT_NEAR(b.iteration_time_s, 5e-6 + 2e9 / (12.5e9 * nic_achievable(c.node_types[1]).fraction), 1e-9);
  EXPECT_DOUBLE_EQ(a.iteration_time_s, b.iteration_time_s);
  EXPECT_DOUBLE_EQ(b.devices[17].comm_s, b.iteration_time_s);  // each sender is busy while it sends
  mirrored.tasks[0].body = SendTask{16, 0, 1e9, CommStream::kPipeline, {{20, 20}}};
  EXPECT_THROW((void)simulate(mirrored, c), std::logic_error);  // a mirror sending to itself
}

TEST(ExecutorSharing, ACollectiveWithMirrorGroupsEqualsOneCollectiveOfEachGroup) {
  // Two all-reduces across the two V100 nodes whose members 16 and 20 share NIC 0: as two tasks
  // started together, or as one task with a mirror group. The same times, link sharing included;
  // the next compute on every member waits for the task, and each member's stream is busy.
  const Cluster c = load_cluster(test::shipped("topologies", "a100-v100-2x2"));
  for (const bool every_collective : {false, true}) {
    SimOptions o;
    o.every_collective = every_collective;
    Program separate;
    separate.devices.resize(c.gpu_count());
    const int a = separate.add({"a", ComputeTask{16, 0.01, 0, 0, {20}}, {}});
    separate.add({"ar1", collective(CollectiveOp::kAllReduce, {16, 0}, 1e9), {a}});
    separate.add({"ar2", collective(CollectiveOp::kAllReduce, {20, 8}, 1e9), {a}});
    separate.add({"b", ComputeTask{16, 0.01, 0, 0, {20}}, {1, 2}});
    Program mirrored;
    mirrored.devices.resize(c.gpu_count());
    const int m = mirrored.add({"a", ComputeTask{16, 0.01, 0, 0, {20}}, {}});
    CollectiveTask both = collective(CollectiveOp::kAllReduce, {16, 0}, 1e9);
    both.mirror_groups = {{20, 8}};
    const int ar = mirrored.add({"ar", both, {m}});
    mirrored.add({"b", ComputeTask{16, 0.01, 0, 0, {20}}, {ar}});
    ASSERT_EQ(validate(mirrored), "");
    const SimResult x = simulate(separate, c, o);
    const SimResult y = simulate(mirrored, c, o);
    EXPECT_FALSE(y.mirrors_diverged);  // the groups meet NIC 0 alike: simulated mirrored, not written out
    EXPECT_DOUBLE_EQ(y.tasks[1].end_s, std::max(x.tasks[1].end_s, x.tasks[2].end_s));
    EXPECT_DOUBLE_EQ(y.iteration_time_s, x.iteration_time_s);
    for (int d : {16, 0, 20, 8}) EXPECT_DOUBLE_EQ(y.devices[d].comm_s, x.devices[d].comm_s) << d;
    // Alone, one all-reduce is faster: the two shared the NIC.
    Program alone = separate;
    alone.tasks.erase(alone.tasks.begin() + 2);
    alone.tasks[2].deps = {1};
    EXPECT_LT(simulate(alone, c, o).tasks[1].end_s, y.tasks[1].end_s);
  }
  Program bad;
  bad.devices.resize(c.gpu_count());
  CollectiveTask wrong = collective(CollectiveOp::kAllReduce, {16, 0}, 1e9);
  wrong.mirror_groups = {{20, 8, 9}};
  bad.add({"wrong", wrong, {}});
  EXPECT_NE(validate(bad), "");
  wrong.mirror_groups = {{16, 8}};
  bad.tasks[0].body = wrong;
  EXPECT_NE(validate(bad), "");  // a member in two groups
}

TEST_F(Executor, StreamsOfDifferentLengthsWaitForTheirOwnTasks) {
  // Devices 0 and 1 run a collective of their own before the one of all four; devices 2 and 3
  // only the second, which must still wait for 0 and 1 (identical streams run as one actor).
  Program p = program();
  const int a = p.add({"a", ComputeTask{2, 0.2, 0, 0}, {}});
  p.add({"pair", collective(CollectiveOp::kAllReduce, {0, 1}, 1e9), {}});
  p.add({"four", collective(CollectiveOp::kAllReduce, {0, 1, 2, 3}, 1e9), {a}});
  const SimResult r = simulate(p, cluster_);
  EXPECT_NEAR(r.tasks[2].start_s, std::max(0.2, r.tasks[1].end_s), 1e-9);
  EXPECT_GT(r.tasks[1].end_s, 0);
}

TEST_F(Executor, TracksPeakMemory) {
  Program p = program();
  p.devices[0].static_memory_bytes = 100;
  p.add({"fwd1", ComputeTask{0, 0.1, 0, 40}, {}});
  p.add({"fwd2", ComputeTask{0, 0.1, 0, 30}, {}});
  p.add({"bwd2", ComputeTask{0, 0.1, 0, -30}, {}});
  p.add({"bwd1", ComputeTask{0, 0.1, 0, -40}, {}});
  p.add({"fwd3", ComputeTask{0, 0.1, 0, 50}, {}});
  const SimResult r = simulate(p, cluster_);
  EXPECT_DOUBLE_EQ(r.devices[0].peak_memory_bytes, 170);
}

TEST_F(Executor, MalformedProgramIsABug) {
  Program p = program();
  p.add({"a", ComputeTask{0, 0.1, 0, 0}, {3}});
  EXPECT_THROW((void)simulate(p, cluster_), std::logic_error);
}

TEST(Report, NonFiniteOrNegativeFiguresAreNeverPrinted) {
  Report r;
  r.strategy = "t";
  r.iteration_time_s = 1;
  r.samples_per_s = 2;
  EXPECT_NO_THROW(check_figures(r));
  r.mfu = std::nan("");
  EXPECT_THROW(check_figures(r), std::runtime_error);
  r.mfu = 0.5;
  r.devices.push_back(DeviceReport{});
  r.devices.back().comm_s = -1;  // a negative communication time
  EXPECT_THROW(check_figures(r), std::runtime_error);
  r.devices.back().comm_s = 0;
  r.iteration_time_s = 0;  // feasible, yet no time
  EXPECT_THROW(check_figures(r), std::runtime_error);
  r.feasible = false;
  EXPECT_NO_THROW(check_figures(r));
  r.feasible = true;
  r.iteration_time_s = 1;
  EXPECT_THROW(set_upper_bound(r, INFINITY), std::runtime_error);
}

TEST(ExecutorScale, FortyThousandGpusRunInOneEventLoop) {
  // 5000 nodes of 8 A100: an actor per GPU stream would need 40 000 stacks, more than the default
  // vm.max_map_count (65 530 mappings, two per stack) holds. GPU g computes for (1 + g % 7) ms;
  // GPUs 0-15 then all-reduce 1 GB, started when the slowest of them is done.
  Cluster c = load_cluster(test::shipped("topologies", "a100-8x8"));
  c.node_types[0].count = 5000;
  index_gpus(c);
  Program p;
  p.devices.resize(c.gpu_count());
  std::vector<int> deps, group;
  for (int g = 0; g < c.gpu_count(); ++g) {
    const int t = p.add({"k", ComputeTask{g, 1e-3 * (1 + g % 7), 0, 0}, {}});
    if (g < 16) {
      deps.push_back(t);
      group.push_back(g);
    }
  }
  const int ar = p.add({"ar", collective(CollectiveOp::kAllReduce, group, 1e9), deps});
  const SimResult r = simulate(p, c);
  EXPECT_NEAR(r.tasks[ar].start_s, 7e-3, 1e-12);  // GPU 6 computes longest among 0-15
  EXPECT_GT(r.tasks[ar].end_s - r.tasks[ar].start_s, 1e9 / 300e9);  // at least one NVSwitch port's worth
  EXPECT_NEAR(r.iteration_time_s, r.tasks[ar].end_s, 1e-12);
  EXPECT_NEAR(r.devices[39999].compute_s, 1e-3 * (1 + 39999 % 7), 1e-12);
}

TEST(ExecutorScale, RelayedTransfersTakeTheTimesOfHostToHostOnes) {
  // Many concurrent flows run as mailbox transfers carried by relay pairs of actors that move to
  // each transfer's hosts before starting it; with relays never in force every flow runs as a
  // host-to-host transfer in batches of actors. Same flows, hosts and bytes: same times, and a
  // traced run (record_flows) records the same transfers either way. Relays
  // are lowered here to 200 flows so that a ring of 512 flows and an all-to-all of 2256 take them,
  // with as many pairs as wanted and with a budget of 12 pairs (each then carries ~190); on A100 +
  // MI250X without cross-vendor RDMA the relays carry the staged flows too, each one's three legs
  // one after another.
  for (const char* cluster : {"a100-8x8", "a100-mi250x"}) {
    Cluster c = load_cluster(test::shipped("topologies", cluster));
    for (auto& t : c.node_types) t.count = 32 / static_cast<int>(c.node_types.size());  // 256 GPUs: a ring of 512 flows
    index_gpus(c);
    std::vector<int> all(static_cast<size_t>(c.gpu_count())), some(48);
    for (int g = 0; g < c.gpu_count(); ++g) all[g] = g;
    for (int g = 0; g < 48; ++g) some[g] = 5 * g;  // an all-to-all of 2256 flows over 48 GPUs
    for (const CollectiveTask& task : {collective(CollectiveOp::kAllReduce, all, 1e9), collective(CollectiveOp::kAllToAll, some, 1e9)}) {
      Program p;
      p.devices.resize(c.gpu_count());
      p.add({"c", task, {}});
      SimOptions host;
      host.record_flows = true;
      host.relays_from_flows = std::numeric_limits<size_t>::max();
      SimOptions relays;
      relays.relays_from_flows = 200;
      SimOptions few = relays;
      few.actor_budget = 25;  // one for the worker: 12 pairs
      SimOptions traced = relays;
      traced.record_flows = true;
      const SimResult host_to_host = simulate(p, c, host);
      const double relayed = simulate(p, c, relays).iteration_time_s;
      const double fewer = simulate(p, c, few).iteration_time_s;
      const SimResult traced_relayed = simulate(p, c, traced);
      EXPECT_GT(relayed, 0);
      EXPECT_NEAR(relayed / host_to_host.iteration_time_s, 1.0, 1e-12) << cluster << " " << collective_name(task.op);
      EXPECT_NEAR(fewer / host_to_host.iteration_time_s, 1.0, 1e-12) << cluster << " " << collective_name(task.op);
      EXPECT_NEAR(traced_relayed.iteration_time_s / host_to_host.iteration_time_s, 1.0, 1e-12) << cluster;
      // The same legs recorded (staged flows: three each) and the last at the same time. Flows in
      // between may end at other times: SimGrid shares links among mailbox and host-to-host
      // transfers alike, yet an all-to-all's flows of one collective end in other groups (1656 and
      // 564 of 2256 against 1368 and 852 here), the collective itself at the same time.
      auto pairs = [](const std::vector<FlowRecord>& f) {
        std::vector<std::pair<int, int>> out;
        double last = 0;
        for (const FlowRecord& r : f) {
          out.emplace_back(r.src_endpoint, r.dst_endpoint);
          last = std::max(last, r.end_s);
        }
        std::sort(out.begin(), out.end());
        return std::make_pair(out, last);
      };
      EXPECT_EQ(pairs(host_to_host.flows).first, pairs(traced_relayed.flows).first) << cluster;
      EXPECT_NEAR(pairs(traced_relayed.flows).second / pairs(host_to_host.flows).second, 1.0, 1e-12) << cluster;
    }
  }
}

TEST(ExecutorScale, RelayPairsKeptForTheRunCarrySetAfterSetAtTheTimesOfHostToHostOnes) {
  // Relay pairs outlive their set of transfers: four all-to-alls of 56 flows over a node's 8 GPUs
  // each run at once, then again after a compute, then four more over two nodes' GPU 0-3 (a mix of
  // NVLink and network flows) beside small sets: a TP group's pipeline send (8 transfers between
  // nodes, one task) and all-reduces of 2 and 4 GPUs. With relays from the first flow in flight,
  // every set takes pairs, however small, the later ones those the earlier ones left idle. Same
  // flows: the same times, task by task, as host-to-host transfers (relays never in force).
  Cluster c = load_cluster(test::shipped("topologies", "a100-8x8"));
  Program p;
  p.devices.resize(c.gpu_count());
  std::vector<int> firsts, seconds;
  for (int n = 0; n < 4; ++n) {
    std::vector<int> node;
    for (int g = 0; g < 8; ++g) node.push_back(8 * n + g);
    firsts.push_back(p.add({"a" + std::to_string(n), collective(CollectiveOp::kAllToAll, node, 3e8 * (n + 1)), {}}));
  }
  const int mid = p.add({"mid", ComputeTask{0, 1e-3, 0, 0}, firsts});
  for (int n = 0; n < 4; ++n) {
    std::vector<int> pair_of_nodes;
    for (int g = 0; g < 4; ++g) pair_of_nodes.push_back(16 * n + g);
    for (int g = 0; g < 4; ++g) pair_of_nodes.push_back(16 * n + 8 + g);
    seconds.push_back(p.add({"b" + std::to_string(n), collective(CollectiveOp::kAllToAll, pair_of_nodes, 2e8), {mid}}));
  }
  SendTask tp_send{32, 48, 5e7, CommStream::kPipeline, {}};
  for (int k = 1; k < 8; ++k) tp_send.mirrors.emplace_back(32 + k, 48 + k);
  seconds.push_back(p.add({"send", tp_send, {mid}}));
  seconds.push_back(p.add({"ar2", collective(CollectiveOp::kAllReduce, {56, 57}, 1e8), {mid}}));
  seconds.push_back(p.add({"ar4", collective(CollectiveOp::kAllReduce, {58, 59, 60, 61}, 1e8), {mid}}));
  SimOptions host;
  host.record_flows = true;  // every collective simulated flow by flow, as the relayed run's
  host.relays_from_flows = std::numeric_limits<size_t>::max();
  SimOptions relays;
  relays.relays_from_flows = 1;
  const SimResult host_to_host = simulate(p, c, host), relayed = simulate(p, c, relays);
  ASSERT_EQ(relayed.tasks.size(), host_to_host.tasks.size());
  for (size_t t = 0; t < p.tasks.size(); ++t) {
    EXPECT_NEAR(relayed.tasks[t].end_s, host_to_host.tasks[t].end_s, 1e-12 * host_to_host.tasks[t].end_s) << p.tasks[t].label;
  }
  EXPECT_GT(relayed.tasks[seconds.back()].end_s, relayed.tasks[mid].end_s);
}

}  // namespace
}  // namespace hetsim

namespace hetsim {
namespace {

// A compute task slows while a collective runs on its GPU (kernels_profile: the H100's measured
// interference), for the part of its run the collective overlaps, and not on a GPU without a
// measurement or with --no-interference.
TEST(ExecutorInterference, ComputeSlowsForThePartACollectiveOverlapsIt) {
  const Cluster cluster = load_cluster(test::shipped("topologies", "pair-a100-h100"));
  const int h0 = 32, h1 = 33;  // H100s (the A100s, GPUs 0-31, have no interference measured)
  const double f = cluster.device_of(h0).collective_interference;
  ASSERT_GT(f, 1.0);
  EXPECT_EQ(cluster.device_of(0).collective_interference, 1.0);
  auto run = [&](int a, int b, bool interference) {
    Program p;
    p.devices.resize(cluster.gpu_count());
    const int a0 = p.add({"a0", ComputeTask{a, 0.1, 0, 0}, {}});
    const int a1 = p.add({"a1", ComputeTask{b, 0.1, 0, 0}, {}});
    p.add({"b0", ComputeTask{a, 0.5, 0, 0}, {}});  // starts with the all-reduce, outlasts it
    p.add({"b1", ComputeTask{b, 0.5, 0, 0}, {}});
    p.add({"ar", collective(CollectiveOp::kAllReduce, {a, b}, 1e9), {a0, a1}});
    SimOptions o;
    o.collective_interference = interference;
    return simulate(p, cluster, o);
  };
  const SimResult on = run(h0, h1, true), off = run(h0, h1, false), a100 = run(0, 1, true);
  const double ar = on.tasks[4].end_s - on.tasks[4].start_s;
  ASSERT_GT(ar, 0.0);
  ASSERT_LT(ar, 0.5 / f);
  // b0 started with the all-reduce: in its `ar` seconds it did ar / f of its 0.5 s of work, the
  // rest (0.5 - ar / f) at full pace once the all-reduce ended.
  EXPECT_NEAR(on.tasks[2].end_s, 0.1 + ar + (0.5 - ar / f), 1e-9);
  EXPECT_NEAR(off.tasks[2].end_s, 0.6, 1e-9);
  EXPECT_NEAR(a100.tasks[2].end_s, 0.6, 1e-9);
}

// A calibration profile's overlap_slowdown multiplies the measured interference (1 where none was
// measured), only while a collective runs beside the compute; compute alone is untouched.
TEST(ExecutorInterference, AProfilesOverlapSlowdownMultipliesTheMeasuredOne) {
  Cluster cluster = load_cluster(test::shipped("topologies", "pair-a100-h100"));
  const int h0 = 32, h1 = 33;
  const double measured = cluster.device_of(h0).collective_interference;
  for (NodeType& nt : cluster.node_types) nt.gpu.fitted.overlap_slowdown = 0.5;
  auto run = [&](int a, int b) {
    Program p;
    p.devices.resize(cluster.gpu_count());
    const int a0 = p.add({"a0", ComputeTask{a, 0.1, 0, 0}, {}});
    const int a1 = p.add({"a1", ComputeTask{b, 0.1, 0, 0}, {}});
    p.add({"b0", ComputeTask{a, 0.5, 0, 0}, {}});
    p.add({"b1", ComputeTask{b, 0.5, 0, 0}, {}});
    p.add({"ar", collective(CollectiveOp::kAllReduce, {a, b}, 1e9), {a0, a1}});
    return simulate(p, cluster, SimOptions{});
  };
  for (const auto& [a, b, f] : {std::tuple{0, 1, 1.5}, std::tuple{h0, h1, 1.5 * measured}}) {
    const SimResult r = run(a, b);
    EXPECT_NEAR(r.tasks[0].end_s, 0.1, 1e-12);  // no collective beside it
    const double ar = r.tasks[4].end_s - r.tasks[4].start_s;
    ASSERT_LT(ar, 0.5 / f);
    EXPECT_NEAR(r.tasks[2].end_s, 0.1 + ar + (0.5 - ar / f), 1e-9) << a;
  }
}

}  // namespace
}  // namespace hetsim
