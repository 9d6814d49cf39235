// File: tests/studies/calibration_host_test.cpp
// The calibration profile's pass_host: the framework's host time at the start of every forward,
// backward and weight-gradient pass. It lengthens a data-parallel step by two passes a micro-batch
// and a pipeline by its passes on the critical path, the planners' estimates by as much, and
// `hetsim calibrate` recovers it from runs synthesised with it.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "base/temp_dir.hpp"
#include "kernels_profile/calibration_profile.hpp"
#include "kernels_profile/cost_model.hpp"
#include "planner/hybrid/hybrid_planner.hpp"
#include "planner/spmd/spmd_planner.hpp"
#include "planner/spmd/spmd_problem.hpp"
#include "studies/validation/calibration_fit.hpp"
#include "studies/validation/run_evaluation.hpp"
#include "test_support.hpp"

namespace hetsim {
namespace {

CalibrationProfile host_profile(const std::vector<std::string>& devices, double seconds) {
  CalibrationProfile p;
  p.name = "host";
  p.devices = devices;
  p.parameters = {{"pass_host", seconds, 0}};
  return p;
}

// The run's predicted iteration time with no profile and with `profile`.
std::pair<double, double> iteration_times(const ValidationRun& run, const CalibrationProfile& profile) {
  const CostModel cost = CostModel::shipped();
  use_no_calibration();
  const RunResult raw = evaluate_run(run, cost, SimOptions{});
  use_calibration_profile(profile);
  const RunResult slowed = evaluate_run(run, cost, SimOptions{});
  EXPECT_TRUE(raw.failure.empty()) << raw.failure;
  EXPECT_TRUE(slowed.failure.empty()) << slowed.failure;
  EXPECT_EQ(raw.figures.front().key, "iteration_time_s");
  return {raw.figures.front().predicted, slowed.figures.front().predicted};
}

std::vector<ValidationRun> runs_of(const std::string& text) {
  const TempDir dir("calibration-host");
  const std::filesystem::path file = dir.path() / "runs.yaml";
  std::ofstream(file) << text;
  return load_runs(file);
}

TEST(CalibrationHost, APassHostLengthensEachDataParallelStepByTwoPasses) {
  // 3 micro-batches a GPU on 8 A100: the first two written as one task, the last on its own.
  const test::RestoreShippedCalibrations restore;
  const std::vector<ValidationRun> runs = runs_of(
      "- name: dp\n  source: s\n  cluster: a100-8x8\n  nodes: 1\n  model: gpt3-1.3b\n  global_batch: 24\n  strategy: dp-even\n"
      "  measured: {iteration_time_s: 1}\n");
  const double h = 5e-3;
  const auto [raw, slowed] = iteration_times(runs.front(), host_profile({"A100-SXM4-80GB", "A100-SXM4-40GB"}, h));
  EXPECT_NEAR(slowed - raw, 3 * 2 * h, 1e-9 + 1e-6 * raw);
}

TEST(CalibrationHost, APassHostLengthensEveryPassOfAPipelineOnTheCriticalPath) {
  // TP 2 x PP 2 x DP 2 on one Selene node, 4 micro-batches a pipeline (1F1B): each of the
  // m + P - 1 = 5 forward-backward steps on the critical path grows by a pass's host time twice.
  const test::RestoreShippedCalibrations restore;
  const std::vector<ValidationRun> runs = load_runs(test::source_dir() / "tests/fixtures/validation/runs.yaml");
  const ValidationRun* grid = nullptr;
  for (const ValidationRun& r : runs) grid = r.name == "gpt-grid-2x2x2" ? &r : grid;
  ASSERT_NE(grid, nullptr);
  const double h = 10e-3;
  const auto [raw, slowed] = iteration_times(*grid, host_profile({"A100-SXM4-80GB"}, h));
  EXPECT_GE(slowed - raw, 2 * h * 4);
  EXPECT_LE(slowed - raw, 2 * h * 5 * 1.01);
}

TEST(CalibrationHost, ThePlannersEstimateAddsThePassesItsSimulationAdds) {
  // GPT-3 1.3B as 2 stages of TP 8 on Selene, 8 micro-batches (1F1B): with 5 ms a pass, both the
  // closed form and the simulation grow by between 2 x 8 and 2 x (8 + 2 - 1) passes' host time.
  ModelSpec m = load_model(test::shipped("workloads", "gpt3-1.3b"));
  m.training.global_batch = 8;
  HybridPlan plan;
  plan.micro_batch = 1;
  PipelinePlan pl;
  pl.micro_batches = 8;
  for (int s = 0; s < 2; ++s) {
    StagePlan st;
    st.tp = 8;
    for (int k = 0; k < 8; ++k) st.devices.push_back(8 * s + k);
    const int half = static_cast<int>(m.layers) / 2;
    st.chunks = {{s * half, (s + 1) * half - 1}};
    pl.stages.push_back(st);
  }
  plan.pipelines.push_back(pl);
  const double h = 5e-3;
  const auto times = [&](double host) {
    Cluster c = test::shipped_cluster("selene-64");
    for (NodeType& nt : c.node_types) nt.gpu.fitted.pass_host_s = host;
    HybridPlanner planner(m, c, CostModel{}, SimOptions{});
    const double estimate = planner.estimate(plan).time_s;
    const Evaluation e = planner.evaluate(plan, "test");
    EXPECT_TRUE(e.report.feasible);
    return std::make_pair(estimate, e.result.iteration_time_s);
  };
  const auto [raw_estimate, raw_simulated] = times(0);
  const auto [estimate, simulated] = times(h);
  for (const double grew : {estimate - raw_estimate, simulated - raw_simulated}) {
    EXPECT_GE(grew, 2 * h * 8 * 0.99);
    EXPECT_LE(grew, 2 * h * 9 * 1.01);
  }
}

TEST(CalibrationHost, TheSpmdSearchsEstimateAddsTheSlowestGpusTwoPassesPerAccumulationStep) {
  // bert-base on the default cluster (16 A100, 16 V100), 8 accumulation steps; the V100s' host time is the
  // longer: every program pays it before each forward and backward pass, so the search picks the
  // same program and its estimate, and the LP's at its shares, grow by 2 x 8 x 5 ms exactly.
  ModelSpec m = load_model(test::shipped("workloads", "bert-base"));
  m.training.micro_batch = 4;
  m.training.global_batch = 8 * 32 * 4;
  const auto plan_with = [&](double a100, double v100) {
    Cluster c = test::shipped_cluster("a100-v100-2x2");
    for (NodeType& nt : c.node_types) nt.gpu.fitted.pass_host_s = nt.gpu.name.starts_with("A100") ? a100 : v100;
    const SpmdProblem p = build_spmd_problem(m, c, CostModel{});
    EXPECT_DOUBLE_EQ(p.accumulation, 8);
    return std::make_pair(p, plan_spmd(p, SpmdPlanOptions{}));
  };
  const auto [p0, raw] = plan_with(0, 0);
  const auto [p1, slowed] = plan_with(2e-3, 5e-3);
  ASSERT_TRUE(raw.found && slowed.found);
  EXPECT_DOUBLE_EQ(pass_host_cost(p1), 2 * 8 * 5e-3);
  EXPECT_NEAR(slowed.best.estimate_s - raw.best.estimate_s, 2 * 8 * 5e-3, 1e-9);
  ASSERT_EQ(slowed.best.program.choices.size(), raw.best.program.choices.size());
  for (size_t i = 0; i < raw.best.program.choices.size(); ++i) EXPECT_EQ(slowed.best.program.choices[i].rule, raw.best.program.choices[i].rule);
  const RatioSolution lp0 = solve_ratios(ratio_problem(p0, raw.best.program, raw.best.ratios, SearchOptions{}));
  const RatioSolution lp1 = solve_ratios(ratio_problem(p1, raw.best.program, raw.best.ratios, SearchOptions{}));
  ASSERT_EQ(lp0.status, LpStatus::kOptimal);
  ASSERT_EQ(lp1.status, LpStatus::kOptimal);
  EXPECT_NEAR(lp1.cost_s - lp0.cost_s, 2 * 8 * 5e-3, 1e-9);
}

TEST(CalibrationHost, APassHostIsRecoveredFromRunsSynthesisedWithIt) {
  // Runs of 2 to 16 micro-batches a GPU: a fixed cost a pass shows in each in proportion.
  const test::RestoreShippedCalibrations restore;
  const CostModel cost = CostModel::shipped();
  std::vector<ValidationRun> runs = load_runs(test::source_dir() / "tests/fixtures/validation/calibration-synthetic.yaml");
  const double h = 1.5e-3;  // inside the grid cell 1-2 ms
  use_calibration_profile(host_profile({"B200"}, h));
  for (ValidationRun& r : runs) r.measured.front().value = evaluate_run(r, cost, SimOptions{}).figures.front().predicted;
  CalibrateOptions o;
  o.software = "test";
  o.date = "2026-12-02";
  o.parameters = {"pass_host"};
  const CalibrationFit fit = fit_calibration(runs, cost, SimOptions{}, o);
  ASSERT_EQ(fit.profile.parameters.size(), 1u);
  EXPECT_NEAR(fit.profile.parameters[0].value, h, 0.05 * h);
  for (const CrossValidatedRun& r : fit.profile.runs) EXPECT_LT(std::fabs(r.in_sample_error), 0.005) << r.run;
  // Written as a time: "1496.3us".
  EXPECT_NE(calibration_profile_text(fit.profile).find("pass_host: {value: 149"), std::string::npos) << calibration_profile_text(fit.profile);
}

}  // namespace
}  // namespace hetsim
