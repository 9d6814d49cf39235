// File: tests/sim/mirror_copies_test.cpp
// Copies of tasks written once for alike pipelines, written out again: the structure, and the
// simulator's fallback to it where the copies do not keep one pace.
#include "sim/mirror_copies.hpp"

#include <gtest/gtest.h>

#include "sim/executor.hpp"
#include "test_support.hpp"

namespace hetsim {
namespace {

TEST(MirrorCopies, EachCopyBecomesATaskOfItsOwnWithItsOwnCopysDependencies) {
  Program p;
  p.devices.resize(8);
  const int a = p.add({"a", ComputeTask{0, 0.1, 0, 0, {1, 2, 3}, 2}, {}});       // copies {0, 1} and {2, 3}
  const int s = p.add({"s", SendTask{1, 4, 1e6, CommStream::kPipeline, {{3, 6}}, 2}, {a}});
  CollectiveTask tp = collective(CollectiveOp::kAllReduce, {4, 5}, 1e6);
  tp.mirror_groups = {{6, 7}};
  const int c = p.add({"tp", tp, {s}});
  const int dp = p.add({"dp", collective(CollectiveOp::kAllReduce, {4, 6}, 1e6), {c, c}});  // over both copies (named twice)
  p.add({"own", ComputeTask{6, 0.1, 0, 0}, {c}});  // a task of copy 1 alone
  p.add({"after", ComputeTask{0, 0.1, 0, 0, {1, 2, 3}, 2}, {dp}});
  ASSERT_EQ(validate(p), "");
  ASSERT_TRUE(has_copies(p));
  const WrittenOut w = written_out(p);
  ASSERT_EQ(w.program.tasks.size(), 10u);
  ASSERT_EQ(validate(w.program), "");
  EXPECT_FALSE(has_copies(w.program));
  const auto& t = w.program.tasks;
  EXPECT_EQ(t[1].label, "a");  // each copy keeps the label (the critical path's kinds)
  EXPECT_EQ(std::get<ComputeTask>(t[1].body).device, 2);
  EXPECT_EQ(std::get<ComputeTask>(t[1].body).mirrors, (std::vector<int>{3}));
  EXPECT_EQ(std::get<SendTask>(t[3].body).src, 3);
  EXPECT_EQ(t[3].deps, (std::vector<int>{1}));                   // copy 1 after copy 1
  EXPECT_EQ(std::get<CollectiveTask>(t[5].body).group, (std::vector<int>{6, 7}));
  EXPECT_EQ(t[6].deps, (std::vector<int>{4, 5}));                // over both: after both copies
  EXPECT_EQ(t[7].deps, (std::vector<int>{5}));                   // device 6: copy 1's collective only
  EXPECT_EQ(t[8].deps, (std::vector<int>{6}));
  EXPECT_EQ(t[9].deps, (std::vector<int>{6}));
}

TEST(MirrorCopies, CopiesThatMeetAnotherTransferUnevenlyAreSimulatedWrittenOut) {
  // Two copies of a send, 16 -> 0 and 18 -> 2, beside a transfer 20 -> 8 that shares NIC 0 with
  // GPU 16 (a100-v100-2x2: four NICs for eight V100s): the first copy runs at half the rate of the
  // second. The simulator sees it and simulates the three as written out.
  const Cluster c = test::shipped_cluster("a100-v100-2x2");
  Program mirrored;
  mirrored.devices.resize(c.gpu_count());
  mirrored.add({"pair", SendTask{16, 0, 1e9, CommStream::kPipeline, {{18, 2}}, 2}, {}});
  mirrored.add({"other", SendTask{20, 8, 1e9}, {}});
  mirrored.add({"next", ComputeTask{0, 0.01, 0, 0, {2}, 2}, {0}});
  Program separate;
  separate.devices.resize(c.gpu_count());
  separate.add({"pair", SendTask{16, 0, 1e9}, {}});
  separate.add({"pair", SendTask{18, 2, 1e9}, {}});
  separate.add({"other", SendTask{20, 8, 1e9}, {}});
  separate.add({"next", ComputeTask{0, 0.01, 0, 0}, {0}});
  separate.add({"next", ComputeTask{2, 0.01, 0, 0}, {1}});
  const SimResult m = simulate(mirrored, c);
  const SimResult s = simulate(separate, c);
  EXPECT_TRUE(m.mirrors_diverged);
  EXPECT_FALSE(s.mirrors_diverged);
  EXPECT_DOUBLE_EQ(m.iteration_time_s, s.iteration_time_s);
  EXPECT_DOUBLE_EQ(m.tasks[0].start_s, 0);
  EXPECT_DOUBLE_EQ(m.tasks[0].end_s, std::max(s.tasks[0].end_s, s.tasks[1].end_s));  // spans its copies
  EXPECT_LT(s.tasks[1].end_s, s.tasks[0].end_s);
  for (int d : {0, 2, 16, 18, 20}) EXPECT_DOUBLE_EQ(m.devices[d].compute_s + m.devices[d].comm_s, s.devices[d].compute_s + s.devices[d].comm_s) << d;
  // Without the other transfer the copies keep one pace: simulated once, mirrored.
  mirrored.tasks.erase(mirrored.tasks.begin() + 1);
  mirrored.tasks[1].deps = {0};
  EXPECT_FALSE(simulate(mirrored, c).mirrors_diverged);
}

}  // namespace
}  // namespace hetsim
