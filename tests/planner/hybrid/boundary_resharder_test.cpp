// File: tests/planner/hybrid/boundary_resharder_test.cpp
// BoundaryResharder: without load balancing, the works and schedule of a pair of layouts are
// worked out once and are those worked out afresh; with load balancing every call sees the
// senders' loads so far.
#include "planner/hybrid/boundary_resharder.hpp"

#include <gtest/gtest.h>

#include "planner/hybrid/stage_boundary.hpp"
#include "planner/resharding/test_meshes.hpp"
#include "test_support.hpp"

namespace hetsim {
namespace {

const std::vector<long> kTensor{4, 2048, 1024};

bool same(const ReshardWorks& a, const ReshardWorks& b) {
  if (a.works.size() != b.works.size() || a.gathers.size() != b.gathers.size() || a.method != b.method) return false;
  for (size_t i = 0; i < a.works.size(); ++i) {
    if (a.works[i].senders != b.works[i].senders || a.works[i].bytes != b.works[i].bytes) return false;
  }
  return true;
}

TEST(BoundaryResharder, WithoutBalancingAPairOfLayoutsIsWorkedOutOnceAsAfresh) {
  const Cluster cluster = test::shipped_cluster("a100-8x8");
  const MeshLayout from = make_layout(test::consecutive_mesh(1, 8, 0), test::spec("R,S1,R"), kTensor, 2);
  const MeshLayout into = make_layout(test::consecutive_mesh(1, 8, 8), test::spec("R,S1,R"), kTensor, 2);
  const MeshLayout other = make_layout(test::consecutive_mesh(1, 8, 16), test::spec("R,S1,R"), kTensor, 2);
  ReshardingChoice choice;  // local all-gather, no load balancing
  BoundaryResharder r(choice, cluster);
  const BoundaryResharder::Moves& first = r.moves(from, into);
  const BoundaryResharder::Moves* first_at = &first;
  (void)r.moves(from, other);
  const BoundaryResharder::Moves& again = r.moves(from, into);
  EXPECT_EQ(&again, first_at);  // kept, not worked out again
  ReshardWorks fresh = make_works(from, into, choice.method, cluster);
  offer_matching_ranks_first(fresh, from, into);
  SenderLoads loads;
  const ReshardSchedule s = schedule_works(fresh, cluster, choice.load_balance, loads, OrderOptions{});
  EXPECT_TRUE(same(again.works, fresh));
  EXPECT_EQ(again.schedule.order, s.order);
  EXPECT_EQ(again.schedule.sender, s.sender);
}

TEST(BoundaryResharder, WithBalancingEachCallSeesTheLoadsSoFar) {
  const Cluster cluster = test::shipped_cluster("a100-8x8");
  // Each of 4 receiving tiles could come from any of 8 replicated senders: balancing gives the
  // first call's to 4 of them and the second call's to the other 4.
  const MeshLayout from = make_layout(test::consecutive_mesh(1, 8, 0), test::spec("R,R,R"), kTensor, 2);
  const MeshLayout into = make_layout(test::consecutive_mesh(1, 4, 8), test::spec("R,S1,R"), kTensor, 2);
  ReshardingChoice choice;
  choice.method = ReshardMethod::kSendRecv;
  choice.load_balance = LoadBalance::kGpu;
  BoundaryResharder r(choice, cluster);
  const std::vector<int> first = r.moves(from, into).schedule.sender;
  const std::vector<int> second = r.moves(from, into).schedule.sender;
  SenderLoads loads;
  ReshardWorks fresh = make_works(from, into, choice.method, cluster);
  offer_matching_ranks_first(fresh, from, into);
  EXPECT_EQ(first, schedule_works(fresh, cluster, choice.load_balance, loads, OrderOptions{}).sender);
  EXPECT_EQ(second, schedule_works(fresh, cluster, choice.load_balance, loads, OrderOptions{}).sender);  // loads carried
  EXPECT_NE(first, second);  // so the second was not the first given back
}

}  // namespace
}  // namespace hetsim
