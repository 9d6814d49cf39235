// File: tests/planner/resharding/sender_choice_test.cpp
// Sender choice: first replica, least-loaded GPU (which may pick two GPUs behind one NIC),
// least-loaded NIC, and the order search (deterministic for a seed, never worse than its greedy).
#include "planner/resharding/sender_choice.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "planner/resharding/test_meshes.hpp"
#include "test_support.hpp"

namespace hetsim {
namespace {

using test::consecutive_mesh;

ReshardWorks works(const Cluster& c, const char* src_spec, const char* dst_spec, ReshardMethod method) {
  const std::vector<long> t{1024, 1024, 512};
  return make_works(make_layout(consecutive_mesh(2, 4, 0), test::spec(src_spec), t, 4),
                    make_layout(consecutive_mesh(2, 4, 8), test::spec(dst_spec), t, 4), method, c);
}

class Senders : public ::testing::Test {
 protected:
  Cluster cluster_ = test::shipped_cluster("p3-8xlarge-5");
  // Case 2: fully replicated on hosts 0-1 -> split over hosts 2-3: two works, eight candidates.
  ReshardWorks case2_ = works(cluster_, "R,R,R", "S0,R,R", ReshardMethod::kBroadcast);
};

TEST_F(Senders, FirstReplicaSendsEverything) {
  SenderLoads loads;
  const ReshardSchedule s = schedule_works(case2_, cluster_, LoadBalance::kNone, loads);
  EXPECT_EQ(s.sender, (std::vector<int>{0, 0}));
}

TEST_F(Senders, PerGpuBalancingCanPickTwoGpusBehindOneNic) {
  // GPUs 0 and 1 are both on host 0: per-GPU loads are balanced, the NIC is not.
  SenderLoads loads;
  const ReshardSchedule s = schedule_works(case2_, cluster_, LoadBalance::kGpu, loads);
  EXPECT_EQ(s.sender, (std::vector<int>{0, 1}));
  EXPECT_EQ(cluster_.gpus[s.sender[0]].node, cluster_.gpus[s.sender[1]].node);
  // The model's makespan is the same as sending both from GPU 0: one NIC carries both halves.
  SenderLoads fresh;
  EXPECT_DOUBLE_EQ(s.model_makespan_s, schedule_works(case2_, cluster_, LoadBalance::kNone, fresh).model_makespan_s);
}

TEST_F(Senders, PerNicBalancingUsesBothHosts) {
  SenderLoads loads;
  const ReshardSchedule s = schedule_works(case2_, cluster_, LoadBalance::kNic, loads);
  EXPECT_NE(cluster_.gpus[s.sender[0]].node, cluster_.gpus[s.sender[1]].node);
  // Half the tensor per NIC at 10 Gbit/s, concurrently: 1 GiB / 1.25 GB/s.
  EXPECT_NEAR(s.model_makespan_s, 1024.0 * 1024 * 1024 / 1.25e9, 1e-9);
}

TEST_F(Senders, LoadsAccumulateAcrossReshardings) {
  // With one work per resharding, the second resharding is sent from the other host.
  ReshardWorks one = case2_;
  one.works.resize(1);
  SenderLoads loads;
  const ReshardSchedule a = schedule_works(one, cluster_, LoadBalance::kNic, loads);
  const ReshardSchedule b = schedule_works(one, cluster_, LoadBalance::kNic, loads);
  EXPECT_NE(cluster_.gpus[a.sender[0]].node, cluster_.gpus[b.sender[0]].node);
  EXPECT_DOUBLE_EQ(loads.gpu_bytes[a.sender[0]], one.works[0].bytes);
}

TEST_F(Senders, OrderSearchIsDeterministicAndNoWorseThanGreedy) {
  // Case 4 by send/recv: 64 works, one candidate each; only the order is free.
  const ReshardWorks w = works(cluster_, "R,S01,R", "S01,R,R", ReshardMethod::kSendRecv);
  ASSERT_EQ(w.works.size(), 64u);
  SenderLoads l1, l2, l3;
  OrderOptions opt;
  opt.seed = 7;
  const ReshardSchedule a = schedule_works(w, cluster_, LoadBalance::kOrder, l1, opt);
  const ReshardSchedule b = schedule_works(w, cluster_, LoadBalance::kOrder, l2, opt);
  EXPECT_EQ(a.order, b.order);
  EXPECT_EQ(a.sender, b.sender);
  std::vector<int> sorted = a.order;
  std::sort(sorted.begin(), sorted.end());
  for (int i = 0; i < 64; ++i) ASSERT_EQ(sorted[i], i);
  EXPECT_LE(a.model_makespan_s, a.greedy_makespan_s);
  // Each source host sends half the tensor through its one NIC: no schedule beats 1 GiB / 1.25 GB/s,
  // and the search proves the greedy schedule reaches it.
  EXPECT_NEAR(a.model_makespan_s, 1024.0 * 1024 * 1024 / 1.25e9, 1e-9);
  EXPECT_TRUE(a.search_exhausted);
  // The natural order sends all 32 works for destination host 2 back to back through its NIC
  // first; host 3's works only overlap their tail.
  const ReshardSchedule n = schedule_works(w, cluster_, LoadBalance::kNone, l3);
  EXPECT_GT(n.model_makespan_s, 1.8 * a.model_makespan_s);
}

TEST_F(Senders, SearchImprovesOnTheNaiveScheduleAndStopsAtItsBudget) {
  // Case 2 with no greedy: the search starts from GPU 0 sending both halves (2 GiB through one
  // NIC) and must reach the two-host optimum, 1 GiB / 1.25 GB/s; with no nodes it keeps the start.
  SenderLoads l1, l2;
  OrderOptions opt;
  opt.greedy_rounds = 0;
  const ReshardSchedule s = schedule_works(case2_, cluster_, LoadBalance::kOrder, l1, opt);
  const double half = 1024.0 * 1024 * 1024 / 1.25e9;
  EXPECT_NEAR(s.greedy_makespan_s, 2 * half, 1e-9);
  EXPECT_NEAR(s.model_makespan_s, half, 1e-9);
  EXPECT_EQ(s.solver, "search");
  EXPECT_TRUE(s.search_exhausted);
  opt.max_expansions = 0;
  const ReshardSchedule cut = schedule_works(case2_, cluster_, LoadBalance::kOrder, l2, opt);
  EXPECT_NEAR(cut.model_makespan_s, 2 * half, 1e-9);
  EXPECT_FALSE(cut.search_exhausted);
  EXPECT_FALSE(cut.stopped_by_time);
}

}  // namespace
}  // namespace hetsim
