// File: tests/planner/spmd/ratio_lp_test.cpp
#include "planner/spmd/ratio_lp.hpp"

#include <gtest/gtest.h>

#include <numeric>

namespace hetsim {
namespace {

TEST(LpModel, SolvesASmallProgramWithClp) {
  // min x + y  s.t.  x + 2y >= 4,  3x + y >= 6,  x, y >= 0.  Optimum at x = 8/5, y = 6/5.
  LpModel m;
  const int x = m.add_col(0, kLpInfinity, 1, "x");
  const int y = m.add_col(0, kLpInfinity, 1, "y");
  m.add_row(4, kLpInfinity, {{x, 1}, {y, 2}});
  m.add_row(6, kLpInfinity, {{x, 3}, {y, 1}});
  const LpSolution s = solve_lp(m);
  ASSERT_EQ(s.status, LpStatus::kOptimal);
  EXPECT_NEAR(s.objective, 14.0 / 5, 1e-9);
  EXPECT_NEAR(s.x[x], 8.0 / 5, 1e-9);
  EXPECT_NE(m.str().find("+ 1 x + 2 y"), std::string::npos);
}

TEST(LpModel, InfeasibilityIsAStatus) {
  LpModel m;
  const int x = m.add_col(0, 1, 1);
  m.add_row(2, kLpInfinity, {{x, 1}});
  EXPECT_EQ(solve_lp(m).status, LpStatus::kInfeasible);
}

// Pure data parallelism: each step is one block; device d takes t_d seconds per sample and the
// whole batch is B samples, so its compute is t_d * B * r_d. No communication.
RatioProblem data_parallel(const std::vector<double>& per_sample_s, int blocks, double batch) {
  RatioProblem p;
  p.devices = static_cast<int>(per_sample_s.size());
  for (int b = 0; b < blocks; ++b) {
    RatioStep s;
    for (int d = 0; d < p.devices; ++d) s.compute.push_back({d, per_sample_s[d] * batch / blocks, 0});
    p.steps.push_back(s);
  }
  return p;
}

TEST(RatioLp, DataParallelSharesAreProportionalToSpeed) {
  // Closed form: the slowest device sets each step, so the optimum equalises t_d r_d:
  // r_d = (1/t_d) / sum_j (1/t_j).
  const std::vector<double> t{1.0, 1.0, 2.5, 2.5, 2.5, 4.0};
  const RatioSolution s = solve_ratios(data_parallel(t, 12, 256));
  ASSERT_EQ(s.status, LpStatus::kOptimal);
  double inv = 0;
  for (double x : t) inv += 1 / x;
  for (size_t d = 0; d < t.size(); ++d) EXPECT_NEAR(s.ratios[d], (1 / t[d]) / inv, 1e-9) << d;
  EXPECT_NEAR(std::accumulate(s.ratios.begin(), s.ratios.end(), 0.0), 1.0, 1e-12);
  EXPECT_NEAR(s.cost_s, 256 / inv, 1e-6);  // every device busy the same time
}

TEST(RatioLp, MemoryCapacityBindsTheFastDevice) {
  RatioProblem p = data_parallel({1.0, 3.0}, 4, 100);
  // Device 0 holds 10 GB of state plus 100 GB x share of activations, with 40 GB: r_0 <= 0.3.
  p.memory = {{0, 100e9, 10e9}, {1, 100e9, 10e9}};
  p.memory_capacity = {40e9, 400e9};
  const RatioSolution s = solve_ratios(p);
  ASSERT_EQ(s.status, LpStatus::kOptimal);
  EXPECT_NEAR(s.ratios[0], 0.3, 1e-9);
  EXPECT_NEAR(s.ratios[1], 0.7, 1e-9);
  p.memory_capacity = {5e9, 5e9};  // nothing fits
  EXPECT_EQ(solve_ratios(p).status, LpStatus::kInfeasible);
}

TEST(RatioLp, CommunicationOfTheLargestShardCountsOnce) {
  // A padded all-gather costs n * max_d(r_d) * S / B: each device's share bounds the step's M.
  RatioProblem p = data_parallel({1.0, 1.0}, 1, 10);
  p.steps[0].comm = {{0, 2 * 4.0, 0}, {1, 2 * 4.0, 0}};
  const RatioSolution s = solve_ratios(p);
  ASSERT_EQ(s.status, LpStatus::kOptimal);
  EXPECT_NEAR(s.ratios[0], 0.5, 1e-9);
  EXPECT_NEAR(s.cost_s, 10 * 0.5 + 8 * 0.5, 1e-9);
}

}  // namespace
}  // namespace hetsim

namespace hetsim {
namespace {

TEST(RatioLp, ClassReductionMatchesTheFullLp) {
  RatioProblem p;
  p.devices = 9;
  for (int k = 0; k < 5; ++k) {
    RatioStep s;
    for (int d = 0; d < p.devices; ++d) {
      s.compute.push_back({d, (1.0 + d % 3) * (k + 1), 0.001 * (d % 3)});
      s.comm.push_back({d, 0.5 + 0.1 * (d % 3), 0.0001});
    }
    p.steps.push_back(s);
  }
  const LpSolution full = solve_lp(build_ratio_lp(p));
  const RatioSolution reduced = solve_ratios(p);
  ASSERT_EQ(full.status, LpStatus::kOptimal);
  ASSERT_EQ(reduced.status, LpStatus::kOptimal);
  EXPECT_NEAR(reduced.cost_s, full.objective, 1e-9);
  for (int d = 3; d < p.devices; ++d) EXPECT_DOUBLE_EQ(reduced.ratios[d], reduced.ratios[d % 3]);
}

}  // namespace
}  // namespace hetsim
