// File: tests/planner/resharding/reshard_works_test.cpp
// Works per method: broadcast moves each slice once to all its replicas, send/recv once per
// receiving GPU, local all-gather once per host then NVLink, signal moves no bytes.
#include "planner/resharding/reshard_works.hpp"

#include <gtest/gtest.h>

#include "planner/resharding/test_meshes.hpp"

#include "test_support.hpp"

namespace hetsim {
namespace {

using test::consecutive_mesh;

MeshLayout layout(const Mesh& m, const char* text, std::vector<long> shape) {
  return make_layout(m, test::spec(text), shape, 4);
}

class Works : public ::testing::Test {
 protected:
  Cluster cluster_ = test::shipped_cluster("p3-8xlarge-5");  // 5 hosts x 4 V100, one 10 Gbit/s NIC each
  const double bytes_ = 1024.0 * 1024 * 4;
  // One GPU (0) to a 2x2 mesh (hosts 1 and 2), fully replicated.
  MeshLayout src_ = layout(consecutive_mesh(1, 1, 0), "R", {1 << 20});
  MeshLayout dst_ = layout(Mesh{2, 2, {4, 5, 8, 9}}, "R", {1 << 20});
};

TEST_F(Works, BroadcastIsOneWorkPerSliceToEveryReplica) {
  const ReshardWorks w = make_works(src_, dst_, ReshardMethod::kBroadcast, cluster_);
  ASSERT_EQ(w.works.size(), 1u);
  EXPECT_EQ(w.works[0].receivers, (std::vector<int>{4, 5, 8, 9}));
  EXPECT_DOUBLE_EQ(w.works[0].bytes, bytes_);
  // Each receiving host's NIC takes the bytes once.
  EXPECT_DOUBLE_EQ(network_bytes(w, {0}, cluster_), 2 * bytes_);
}

TEST_F(Works, SendRecvIsOneWorkPerReceivingGpu) {
  const ReshardWorks w = make_works(src_, dst_, ReshardMethod::kSendRecv, cluster_);
  ASSERT_EQ(w.works.size(), 4u);
  EXPECT_DOUBLE_EQ(network_bytes(w, {0, 0, 0, 0}, cluster_), 4 * bytes_);
  const ReshardWorks sig = make_works(src_, dst_, ReshardMethod::kSignal, cluster_);
  ASSERT_EQ(sig.works.size(), 4u);
  EXPECT_DOUBLE_EQ(network_bytes(sig, {0, 0, 0, 0}, cluster_), 4);  // one byte per message
}

TEST_F(Works, LocalAllGatherFallsBackWhereReplicasSpanHosts) {
  const ReshardWorks w = make_works(src_, dst_, ReshardMethod::kLocalAllGather, cluster_);
  EXPECT_EQ(w.method, ReshardMethod::kSendRecv);
  EXPECT_NE(w.note.find("replicates a tile across hosts"), std::string::npos);
  EXPECT_EQ(w.works.size(), 4u);
  EXPECT_TRUE(w.gathers.empty());
}

TEST_F(Works, LocalAllGatherSplitsAHostsReplicas) {
  // One host of 4: each GPU receives a quarter, then the host all-gathers the whole tile.
  const MeshLayout dst = layout(consecutive_mesh(1, 4, 4), "R", {1 << 20});
  const ReshardWorks w = make_works(src_, dst, ReshardMethod::kLocalAllGather, cluster_);
  EXPECT_EQ(w.method, ReshardMethod::kLocalAllGather);
  ASSERT_EQ(w.works.size(), 4u);
  for (const ReshardWork& x : w.works) EXPECT_DOUBLE_EQ(x.bytes, bytes_ / 4);
  ASSERT_EQ(w.gathers.size(), 1u);
  EXPECT_EQ(w.gathers[0].group, (std::vector<int>{4, 5, 6, 7}));
  EXPECT_DOUBLE_EQ(w.gathers[0].bytes, bytes_);
  EXPECT_DOUBLE_EQ(network_bytes(w, {0, 0, 0, 0}, cluster_), bytes_);
}

TEST_F(Works, LocalAllGatherNeedsADivisibleDimension) {
  const MeshLayout src = layout(consecutive_mesh(1, 1, 0), "R,R", {3, 5});
  const MeshLayout dst = layout(consecutive_mesh(1, 4, 4), "R,R", {3, 5});
  const ReshardWorks w = make_works(src, dst, ReshardMethod::kLocalAllGather, cluster_);
  EXPECT_EQ(w.method, ReshardMethod::kSendRecv);
  EXPECT_EQ(w.note, "no tensor dimension of the destination tiles divides by their replica count");
}

}  // namespace
}  // namespace hetsim
