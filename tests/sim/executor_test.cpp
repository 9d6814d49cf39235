// File: tests/sim/executor_test.cpp
// The executor: streams, dependencies, overlap, memory, and link sharing.
#include "sim/executor.hpp"

#include <gtest/gtest.h>

#include "test_support.hpp"

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
  // Alone: 5 us + 1 GB / 12.5 GB/s. Together: each gets half of the NIC.
  EXPECT_NEAR(simulate(one, c).iteration_time_s, 5e-6 + 1e9 / 12.5e9, 1e-9);
  EXPECT_NEAR(simulate(two, c).iteration_time_s, 5e-6 + 2e9 / 12.5e9, 1e-9);
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

}  // namespace
}  // namespace hetsim
