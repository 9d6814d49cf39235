// File: tests/planner/spmd/slice_cost_test.cpp
// An SPMD program's operator times are linear in a GPU's share (HAP's model), taken at the shape a
// GPU runs: an even split's slice. They were taken at the global micro-batch's shape, whose GEMMs no
// GPU runs and which reach a higher efficiency: a data-parallel SPMD step on 8 A100s cost 1/8 of one
// A100 running all 8 samples, 7-10 % less than the same step costed as data parallelism (physics
// audit, 2026-12-05).
#include <gtest/gtest.h>

#include <string>

#include "planner/spmd/spmd_problem.hpp"
#include "test_support.hpp"

namespace hetsim {
namespace {

TEST(SpmdSliceCost, AnEvenShareOfEightGpusCostsWhatOneGpuRunningItsSliceCosts) {
  const ModelSpec m = load_model(test::shipped("workloads", "gpt3-1.3b"));  // micro-batch 1
  const Cluster eight = load_cluster(test::source_dir() / "studies/validation/clusters/dgx-a100-1.yaml");
  const Cluster one = load_cluster(test::source_dir() / "studies/validation/clusters/1xa100-80gb.yaml");
  ASSERT_EQ(eight.gpu_count(), 8);
  ASSERT_EQ(one.gpu_count(), 1);
  ASSERT_EQ(eight.node_types[0].gpu.name, one.node_types[0].gpu.name);
  const SpmdProblem p8 = build_spmd_problem(m, eight, CostModel::shipped());
  const SpmdProblem p1 = build_spmd_problem(m, one, CostModel::shipped());
  ASSERT_EQ(p8.ops.size(), p1.ops.size());
  int gemms = 0;
  for (size_t i = 0; i < p8.ops.size(); ++i) {
    const SpmdOp& a = p8.ops[i];
    const SpmdOp& b = p1.ops[i];
    ASSERT_EQ(a.name, b.name);
    EXPECT_NEAR(a.time_s[0] / 8, b.time_s[0], 1e-9 * b.time_s[0]) << a.name;
    EXPECT_NEAR(a.bwd_s[0] / 8, b.bwd_s[0], 1e-9 * b.bwd_s[0]) << a.name;
    // Memory and communication stay those of the global micro-batch: 8 samples' activations.
    EXPECT_NEAR(a.saved_bytes[0], 8 * b.saved_bytes[0], 1e-9 * a.saved_bytes[0] + 1) << a.name;
    gemms += a.kind == OpKind::kLinear ? 1 : 0;
  }
  EXPECT_GT(gemms, 0);
}

}  // namespace
}  // namespace hetsim
