// File: tests/planner/spmd/spmd_program_test.cpp
// SPMD programs: identical gradient-accumulation steps held once or twice, simulated to the times
// of writing every one out.
#include "planner/spmd/spmd_program.hpp"

#include <gtest/gtest.h>

#include "planner/spmd/spmd_judge.hpp"
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
