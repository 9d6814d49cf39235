// File: tests/planner/spmd/spmd_program_test.cpp
// SPMD programs: identical gradient-accumulation steps held once or twice, simulated to the times
// of writing every one out.
#include "planner/spmd/spmd_program.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>

#include "planner/spmd/spmd_judge.hpp"
#include "sim/collective.hpp"
#include "test_support.hpp"
#include "workloads/model.hpp"

namespace hetsim {
namespace {

void expect_same_iteration(const Evaluation& once, const Evaluation& all, const std::string& what) {
  ASSERT_TRUE(once.report.feasible && all.report.feasible) << what;
  EXPECT_NEAR(once.report.iteration_time_s / all.report.iteration_time_s, 1.0, 1e-9) << what;
  EXPECT_NEAR(once.report.mfu / all.report.mfu, 1.0, 1e-9) << what;
  ASSERT_EQ(once.report.devices.size(), all.report.devices.size()) << what;
  for (size_t d = 0; d < all.report.devices.size(); ++d) {
    const DeviceReport& x = once.report.devices[d];
    const DeviceReport& y = all.report.devices[d];
    EXPECT_NEAR(x.compute_s / y.compute_s, 1.0, 1e-9) << what << " gpu" << d;
    EXPECT_NEAR(x.comm_s, y.comm_s, 1e-9 * all.report.iteration_time_s) << what << " gpu" << d;
    EXPECT_NEAR(x.idle_s, y.idle_s, 1e-9 * all.report.iteration_time_s) << what << " gpu" << d;
    EXPECT_DOUBLE_EQ(x.peak_memory_bytes, y.peak_memory_bytes) << what << " gpu" << d;
  }
}

TEST(SpmdProgram, IdenticalStepsHeldOnceGiveTheTimesOfEveryStep) {
  // gpt3-2.7b on 32 mixed GPUs, 16 accumulation steps: candidates that shard layers (collectives in
  // every step: the repeated step, periodic from the second) and ones that only compute per step.
  const Cluster c = test::shipped_cluster("a100-v100-2x2");
  int repeated = 0, collapsed = 0;
  for (const auto& [name, batch] : {std::pair{"gpt3-2.7b", 4096L}, std::pair{"bert-base", 8192L}}) {
    ModelSpec m = load_model(test::shipped("workloads", name));
    m.training.global_batch = batch;
    SimOptions every;
    every.every_step = true;
    const JudgedPlan all = plan_and_judge(m, c, CostModel{}, SpmdPlanOptions{}, 3, every, "spmd");
    const JudgedPlan once = plan_and_judge(m, c, CostModel{}, SpmdPlanOptions{}, 3, SimOptions{}, "spmd");
    ASSERT_EQ(all.judged.size(), once.judged.size()) << name;
    ASSERT_GE(once.problem.accumulation, 5) << name;
    for (size_t i = 0; i < all.judged.size(); ++i) {
      const Evaluation& o = once.judged[i].evaluation;
      const Evaluation& a = all.judged[i].evaluation;
      const std::string what = std::string(name) + " #" + std::to_string(i + 1);
      expect_same_iteration(o, a, what);
      EXPECT_LT(o.program.tasks.size(), a.program.tasks.size()) << what;
      // The program does not grow with the steps.
      SpmdProblem more = once.problem;
      more.accumulation *= 4;
      const Program bigger = spmd_to_program(more, once.judged[i].candidate, m, c, CostModel{}, SearchOptions{}, "spmd");
      EXPECT_EQ(bigger.tasks.size(), o.program.tasks.size()) << what;
      if (o.program.repeated_step) {  // simulated twice, not written out
        ++repeated;
        EXPECT_GT(o.result.repeat_gap_s, 0) << what;
        EXPECT_LT(o.result.activities * 3, a.result.activities) << what;
      } else {
        ++collapsed;
      }
    }
  }
  EXPECT_GT(repeated, 0);
  EXPECT_GT(collapsed, 0);
}

}  // namespace
}  // namespace hetsim

namespace hetsim {
namespace {

TEST(SpmdJudge, AllToAllCountsTheFlowsOfItsAlgorithm) {
  // 16 A100 on 2 NVSwitch nodes: NCCL's PXN all-to-all, m g (g - 1) NVSwitch flows and g m (m - 1)
  // rail flows (m = 2 nodes of g = 8); pairwise, every ordered pair: n (n - 1).
  const Cluster c = test::shipped_cluster("a100-v100-2x2");
  Program p;
  p.devices.resize(c.gpu_count());
  std::vector<int> sixteen(16);
  for (int d = 0; d < 16; ++d) sixteen[d] = d;
  p.add({"ring", collective(CollectiveOp::kAllReduce, sixteen, 1e9), {}});
  p.add({"a2a", collective(CollectiveOp::kAllToAll, sixteen, 1e6), {}});
  const LargestCollective big = largest_collective(p, c);
  EXPECT_EQ(big.task, 1);
  EXPECT_EQ(big.flows, 2u * 8 * 7 + 8u * 2 * 1);
  std::get<CollectiveTask>(p.tasks[1].body).algorithm = Algorithm::kPairwise;
  EXPECT_EQ(largest_collective(p, c).flows, 16u * 15u);
}

TEST(SpmdJudge, CandidatesStartingTooManyFlowsAreLeftOutNamingTheCollective) {
  const Cluster c = test::shipped_cluster("a100-v100-2x2");
  // gpt3-2.7b at a global batch of 4096: candidates that shard layers and ones that do not.
  ModelSpec m = load_model(test::shipped("workloads", "gpt3-2.7b"));
  m.training.global_batch = 4096;
  const JudgedPlan all = plan_and_judge(m, c, CostModel{}, SpmdPlanOptions{}, 3, SimOptions{}, "spmd", SIZE_MAX);
  ASSERT_GE(all.judged.size(), 2u);
  EXPECT_EQ(all.left_out, 0);
  std::vector<size_t> flows;
  for (const JudgedCandidate& j : all.judged) flows.push_back(largest_collective(j.evaluation.program, c).flows);
  const size_t most = *std::max_element(flows.begin(), flows.end());
  const size_t least = *std::min_element(flows.begin(), flows.end());  // 32 x 31: a grouped all-gather
  ASSERT_GT(least, 0u);
  // Every candidate within the budget: the same judgement.
  const JudgedPlan same = plan_and_judge(m, c, CostModel{}, SpmdPlanOptions{}, 3, SimOptions{}, "spmd", most);
  ASSERT_EQ(same.judged.size(), all.judged.size());
  EXPECT_EQ(same.left_out, 0);
  for (size_t i = 0; i < all.judged.size(); ++i) {
    EXPECT_EQ(same.judged[i].evaluation.report.iteration_time_s, all.judged[i].evaluation.report.iteration_time_s) << i;
  }
  // None within it: nothing simulated, and why.
  const JudgedPlan none = plan_and_judge(m, c, CostModel{}, SpmdPlanOptions{}, 3, SimOptions{}, "spmd", least - 1);
  EXPECT_TRUE(none.judged.empty());
  EXPECT_EQ(none.chosen, -1);
  EXPECT_GE(none.left_out, static_cast<long>(all.judged.size()));
  EXPECT_NE(none.left_out_reason.find(" over 32 GPUs starts "), std::string::npos) << none.left_out_reason;
  EXPECT_NE(none.left_out_reason.find("candidates are simulated up to " + std::to_string(least - 1)), std::string::npos)
      << none.left_out_reason;
}

}  // namespace
}  // namespace hetsim
