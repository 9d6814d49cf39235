// File: tests/studies/calibration_fit_test.cpp
// `hetsim calibrate`'s fit: the surrogate's fit recovers known values and leaves sources out as
// stated, a fit on runs synthesised at known parameters recovers them, a measured parameter is held,
// an unconstrained parameter is refused. A profile in force: calibration_profiles_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <unistd.h>

#include "base/input_error.hpp"
#include "base/temp_dir.hpp"
#include "kernels_profile/calibration_profile.hpp"
#include "kernels_profile/cost_model.hpp"
#include "kernels_profile/device.hpp"
#include "planner/strategies.hpp"
#include "studies/validation/calibration_fit.hpp"
#include "studies/validation/run_evaluation.hpp"
#include "test_support.hpp"
#include "workloads/op_graph.hpp"

namespace hetsim {
namespace {

const std::vector<double> kAxis = {0, 1, 2, 4};

// One run's log-time on the grid from its time, a function of the parameters.
template <typename F>
std::vector<double> on_grid(const std::vector<double>& scales, F f) {
  std::vector<double> g;
  for (const double a : kAxis) {
    if (scales.size() == 1) {
      g.push_back(std::log(f(a * scales[0], 0.0)));
      continue;
    }
    for (const double b : kAxis) g.push_back(std::log(f(a * scales[0], b * scales[1])));
  }
  return g;
}

TEST(CalibrationFit, TheSurrogateFitRecoversParametersThatMoveEachRunLinearly) {
  const std::vector<double> scales = {1e-3, 3e-5};
  const double x = 1.3e-3, y = 4.5e-5;  // the truth
  std::vector<std::vector<double>> logp;
  std::vector<double> logm;
  const double a[] = {10, 40, 5, 80, 20}, b[] = {300, 100, 900, 50, 600}, c[] = {1, 2, 3, 4, 5};
  for (int i = 0; i < 5; ++i) {
    auto f = [&](double u, double v) { return c[i] + a[i] * u + b[i] * v; };  // a time, linear in each
    logp.push_back(on_grid(scales, f));
    logm.push_back(std::log(f(x, y)));
  }
  const GridFit fit = fit_on_grid(logp, logm, scales, kAxis, {true, true}, {0, 1, 2, 3, 4});
  EXPECT_NEAR(fit.values[0], x, 1e-9);
  EXPECT_NEAR(fit.values[1], y, 1e-11);
  EXPECT_LT(fit.rss, 1e-16);
  EXPECT_TRUE(fit.separable);
}

TEST(CalibrationFit, EachFoldFitsOnTheOtherSourcesOnly) {
  // A hand case with three sources of one run each, one parameter: p_i = c_i (1 + a x), measured
  // m_i. Fitted on runs j and k alone, least squares of log errors gives log(1 + a x) = the mean of
  // log m - log c over j and k.
  const std::vector<double> scales = {1e-3};
  const double a = 200, c[] = {1, 2, 0.5}, m[] = {1.2, 2.6, 0.55};
  std::vector<std::vector<double>> logp;
  for (int i = 0; i < 3; ++i) logp.push_back(on_grid(scales, [&](double u, double) { return c[i] * (1 + a * u); }));
  std::vector<double> logm;
  for (const double x : m) logm.push_back(std::log(x));
  for (size_t out = 0; out < 3; ++out) {
    std::vector<size_t> rest;
    double mean = 0;
    for (size_t i = 0; i < 3; ++i) {
      if (i == out) continue;
      rest.push_back(i);
      mean += std::log(m[i] / c[i]) / 2;
    }
    const GridFit f = fit_on_grid(logp, logm, scales, kAxis, {true}, rest);
    EXPECT_NEAR(f.values[0], (std::exp(mean) - 1) / a, 1e-9) << "source " << out << " left out";
  }
}

TEST(CalibrationFit, ParametersWhoseEffectsAreInProportionAreNotSeparable) {
  const std::vector<double> scales = {1e-3, 3e-5};
  std::vector<std::vector<double>> logp;
  std::vector<double> logm;
  for (int i = 1; i <= 4; ++i) {
    auto f = [&](double u, double v) { return 1 + i * (u / 1e-3 + v / 3e-5); };  // only u/scale + v/scale matters
    logp.push_back(on_grid(scales, f));
    logm.push_back(std::log(f(1e-3, 3e-5)) + 0.01 * (i % 2));
  }
  EXPECT_FALSE(fit_on_grid(logp, logm, scales, kAxis, {true, true}, {0, 1, 2, 3}).separable);
}

std::vector<ValidationRun> synthetic_runs() {
  return load_runs(test::source_dir() / "tests/fixtures/validation/calibration-synthetic.yaml");
}

CalibrationProfile profile_at(double layer_s, double gemm_s) {
  CalibrationProfile p;
  p.name = "truth";
  p.devices = {"B200"};
  p.parameters = {{"moe_layer_host", layer_s, 0}, {"expert_gemm_host", gemm_s, 0}};
  return p;
}

double predicted(const ValidationRun& run, const CostModel& cost) {
  const RunResult r = evaluate_run(run, cost, SimOptions{});
  EXPECT_TRUE(r.failure.empty()) << run.name << ": " << r.failure;
  return r.figures.empty() ? 0 : r.figures.front().predicted;
}

// The synthetic runs, each measured as predicted with a GEMM time excess of `excess` on B200
// (the profile in force afterwards: the shipped ones).
std::vector<ValidationRun> runs_at_excess(const CostModel& cost, double excess) {
  std::vector<ValidationRun> runs = synthetic_runs();
  CalibrationProfile truth;
  truth.name = "truth";
  truth.devices = {"B200"};
  truth.parameters = {{"gemm_time_excess", excess, 0}};
  use_calibration_profile(truth);
  for (ValidationRun& r : runs) r.measured.front().value = predicted(r, cost);
  use_shipped_calibrations();
  return runs;
}

// Options fitting gemm_time_excess alone.
CalibrateOptions gemm_excess_options(const std::string& date) {
  CalibrateOptions o;
  o.software = "test";
  o.date = date;
  o.parameters = {"gemm_time_excess"};
  return o;
}

TEST(CalibrationFit, AFitRecoversTheParametersItsRunsWereSynthesisedWith) {
  const CostModel cost = CostModel::shipped();
  std::vector<ValidationRun> runs = synthetic_runs();
  const double layer = 1.5e-3, gemm = 6e-5;  // on grid cells' insides, not on their points
  use_calibration_profile(profile_at(layer, gemm));
  for (ValidationRun& r : runs) r.measured.front().value = predicted(r, cost);
  CalibrateOptions o;
  o.software = "test";
  o.date = "2026-11-28";
  o.parameters = {"moe_layer_host", "expert_gemm_host"};
  const CalibrationFit fit = fit_calibration(runs, cost, SimOptions{}, o);
  use_shipped_calibrations();
  EXPECT_TRUE(fit.refused.empty());
  ASSERT_EQ(fit.profile.parameters.size(), 2u);
  // The surrogate interpolates each run's prediction linearly between grid points 1x and 2x a
  // parameter's scale; a run's time is piecewise linear in the host times (a max per operator), so
  // the recovered values stand within a tenth of the truth, and every run is predicted within 1 %.
  EXPECT_NEAR(fit.profile.parameters[0].value, layer, 0.1 * layer);
  EXPECT_NEAR(fit.profile.parameters[1].value, gemm, 0.1 * gemm);
  ASSERT_EQ(fit.profile.runs.size(), runs.size());
  for (const CrossValidatedRun& r : fit.profile.runs) {
    EXPECT_LT(std::fabs(r.in_sample_error), 0.01) << r.run;
    EXPECT_LT(std::fabs(r.loso_error), 0.03) << r.run;
  }
  EXPECT_EQ(fit.profile.devices, std::vector<std::string>{"B200"});
  // The profile reads back as written.
  const std::filesystem::path file = std::filesystem::temp_directory_path() / ("hetsim-profile-" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(file) << calibration_profile_text(fit.profile);
  const CalibrationProfile back = load_calibration_profile(file);
  std::filesystem::remove(file);
  EXPECT_EQ(back.parameters.size(), 2u);
  EXPECT_NEAR(back.parameters[1].value, fit.profile.parameters[1].value, 1e-6 * gemm);
  EXPECT_EQ(back.fitted_on, fit.profile.fitted_on);
  EXPECT_EQ(back.runs.size(), fit.profile.runs.size());
}

TEST(CalibrationFit, AParameterAtTheTopOfItsRangeIsRefusedWithWhy) {
  // Runs 20 % slower than even GEMMs twice the kernel model's time: the kernel model is wrong
  // there, and no profile may say otherwise.
  const CostModel cost = CostModel::shipped();
  std::vector<ValidationRun> runs = synthetic_runs();
  CalibrationProfile truth;
  truth.name = "truth";
  truth.devices = {"B200"};
  truth.parameters = {{"gemm_time_excess", 1.0, 0}};
  use_calibration_profile(truth);
  for (ValidationRun& r : runs) r.measured.front().value = predicted(r, cost) / 1.2;  // throughput: slower
  use_shipped_calibrations();
  CalibrateOptions o;
  o.software = "test";
  o.date = "2026-11-29";
  o.parameters = {"gemm_time_excess"};
  try {
    (void)fit_calibration(runs, cost, SimOptions{}, o);
    ADD_FAILURE() << "fitted a parameter at its bound";
  } catch (const InputError& e) {
    const std::string m = e.diagnostics().front().message;
    EXPECT_NE(m.find("gemm_time_excess: the fit reached the top of its range (1)"), std::string::npos) << m;
    EXPECT_NE(m.find("the model is wrong there"), std::string::npos) << m;
  }
}

TEST(CalibrationFit, AGemmTimeExcessIsRecoveredAndWrittenAsAShare) {
  const CostModel cost = CostModel::shipped();
  const double excess = 0.35;  // inside the grid cell 0.25-0.5
  const CalibrationFit fit = fit_calibration(runs_at_excess(cost, excess), cost, SimOptions{}, gemm_excess_options("2026-11-28"));
  use_shipped_calibrations();
  ASSERT_EQ(fit.profile.parameters.size(), 1u);
  EXPECT_NEAR(fit.profile.parameters[0].value, excess, 0.1 * excess);
  for (const CrossValidatedRun& r : fit.profile.runs) EXPECT_LT(std::fabs(r.in_sample_error), 0.01) << r.run;
  // A share, not a time: written as a plain number and read back as one.
  const std::string text = calibration_profile_text(fit.profile);
  EXPECT_NE(text.find("gemm_time_excess: {value: 0."), std::string::npos) << text;
  const std::filesystem::path file = std::filesystem::temp_directory_path() / ("hetsim-share-" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(file) << text;
  const CalibrationProfile back = load_calibration_profile(file);
  std::filesystem::remove(file);
  ASSERT_EQ(back.parameters.size(), 1u);
  EXPECT_NEAR(back.parameters[0].value, fit.profile.parameters[0].value, 1e-6);
  EXPECT_NE(back.describe().find("gemm_time_excess 0.3"), std::string::npos) << back.describe();
}

// The synthetic runs, each measured as predicted with `truth`'s parameters on B200 (in force afterwards).
std::vector<ValidationRun> runs_made_at(const CostModel& cost, std::vector<FittedParameter> truth) {
  std::vector<ValidationRun> runs = synthetic_runs();
  CalibrationProfile p;
  p.name = "truth";
  p.devices = {"B200"};
  p.parameters = std::move(truth);
  use_calibration_profile(p);
  for (ValidationRun& r : runs) r.measured.front().value = predicted(r, cost);
  return runs;
}

// Runs synthesised at a GEMM excess of 0.35 and `second` at `value` (inside grid cells, not on their
// points): the fit of both recovers each within a tenth, and predicts every run within 1 %.
void recovered_beside_a_gemm_excess(const std::string& second, double value) {
  const CostModel cost = CostModel::shipped();
  const double gemm = 0.35;
  std::vector<ValidationRun> runs = runs_made_at(cost, {{"gemm_time_excess", gemm, 0}, {second, value, 0}});
  CalibrateOptions o = gemm_excess_options("2026-11-29");
  o.parameters = {"gemm_time_excess", second};
  const CalibrationFit fit = fit_calibration(runs, cost, SimOptions{}, o);
  use_shipped_calibrations();
  EXPECT_TRUE(fit.refused.empty());
  ASSERT_EQ(fit.profile.parameters.size(), 2u);
  EXPECT_EQ(fit.profile.parameters[1].name, second);
  EXPECT_NEAR(fit.profile.parameters[0].value, gemm, 0.1 * gemm);
  EXPECT_NEAR(fit.profile.parameters[1].value, value, 0.1 * value);
  for (const CrossValidatedRun& r : fit.profile.runs) EXPECT_LT(std::fabs(r.in_sample_error), 0.01) << r.run;
}

TEST(CalibrationFit, AMemoryBoundExcessAndAGemmExcessAreRecoveredTogether) {
  // The synthetic runs differ in micro-batch and expert-parallel size, so in how much of their time is
  // GEMMs and how much memory-bound kernels (norms, casts, permutation copies, the optimizer): the
  // two shares are told apart.
  recovered_beside_a_gemm_excess("memory_bound_time_excess", 0.3);
}

TEST(CalibrationFit, AnOverlapSlowdownIsRecoveredBesideAGemmExcess) {
  // The synthetic runs' all-to-alls and data-parallel collectives run beside compute for a share of
  // their time that differs from run to run: compute slowed beside them is told from slower GEMMs.
  recovered_beside_a_gemm_excess("overlap_slowdown", 0.25);
}

TEST(CalibrationFit, AKernelOverheadIsRecoveredBesideAGemmExcess) {
  // Micro-batches of different sizes make kernels of different lengths: a fixed cost per kernel is
  // told from a share of every GEMM's time.
  recovered_beside_a_gemm_excess("kernel_overhead", 7e-6);
}

TEST(CalibrationFit, AMambaScanExcessIsRecoveredAndTheGridSpansOnlyTheParametersActingOnEachRun) {
  // Hybrid runs (Mamba layers) beside the Qwen3-like runs, made at a GEMM excess and a scan excess
  // (inside grid cells): both are recovered. The scan's share cannot move a model without Mamba
  // layers, so the grid simulates those runs at the GEMM excess's 4 values, not at all 16 points.
  const CostModel cost = CostModel::shipped();
  std::vector<ValidationRun> runs = synthetic_runs();
  for (ValidationRun& r : load_runs(test::source_dir() / "tests/fixtures/validation/calibration-synthetic-hybrid.yaml")) {
    runs.push_back(std::move(r));
  }
  CalibrationProfile truth;
  truth.name = "truth";
  truth.devices = {"B200"};
  truth.parameters = {{"gemm_time_excess", 0.35, 0}, {"ssm_scan_time_excess", 1.5, 0}};
  use_calibration_profile(truth);
  for (ValidationRun& r : runs) r.measured.front().value = predicted(r, cost);
  CalibrateOptions o = gemm_excess_options("2026-12-07");
  o.parameters = {"gemm_time_excess", "ssm_scan_time_excess"};
  size_t grid = 0;
  const CalibrationFit fit = fit_calibration(runs, cost, SimOptions{}, o, [&](size_t done, size_t, const std::string& unit) {
    if (unit.find("on the grid") != std::string::npos) grid = std::max(grid, done);
  });
  use_shipped_calibrations();
  EXPECT_TRUE(fit.refused.empty());
  ASSERT_EQ(fit.profile.parameters.size(), 2u);
  EXPECT_NEAR(fit.profile.parameters[0].value, 0.35, 0.035);
  EXPECT_EQ(fit.profile.parameters[1].name, "ssm_scan_time_excess");
  EXPECT_NEAR(fit.profile.parameters[1].value, 1.5, 0.15);
  for (const CrossValidatedRun& r : fit.profile.runs) EXPECT_LT(std::fabs(r.in_sample_error), 0.01) << r.run;
  // 6 Qwen3-like settings at 4 points and 2 hybrid ones at 16, less the origins and the screen's
  // points, plus the fits' own simulations (at most one a setting a fold, 3 sources): under the 8 x 16
  // the whole grid would take.
  EXPECT_GT(grid, 0u);
  EXPECT_LE(grid, 6u * 4 + 2 * 16 + 2 * 8);
}

TEST(CalibrationFit, AFoldWithFewerRunsThanParametersFitsNothing) {
  // Two parameters fitted on one run of the other source are any point of a line of equally good
  // values: the left-out runs' error would be an arbitrary one (AMD's Primus profile, 2026-12-04:
  // a residual-add change of under a point moved it by 12). A fold with fewer runs than parameters
  // fits nothing, and its runs keep the raw error.
  const CostModel cost = CostModel::shipped();
  std::vector<ValidationRun> runs = runs_made_at(cost, {{"gemm_time_excess", 0.35, 0}, {"memory_bound_time_excess", 0.3, 0}});
  for (size_t i = 0; i < runs.size(); ++i) runs[i].source_group = i + 1 < runs.size() ? "many" : "one";
  CalibrateOptions o = gemm_excess_options("2026-12-04");
  o.parameters = {"gemm_time_excess", "memory_bound_time_excess"};
  const CalibrationFit fit = fit_calibration(runs, cost, SimOptions{}, o);
  use_shipped_calibrations();
  ASSERT_EQ(fit.profile.parameters.size(), 2u);
  ASSERT_EQ(fit.profile.runs.size(), runs.size());
  for (const CrossValidatedRun& r : fit.profile.runs) {
    const bool left_with_one = r.source == "many";  // its fold keeps the one run of "one"
    EXPECT_EQ(r.loso_unfitted, left_with_one) << r.run;
    // Unfitted: the raw model, which leaves out the 35 % longer GEMMs the runs were made with, so
    // it predicts their throughput too high.
    if (left_with_one) EXPECT_GT(r.loso_error, 0.05) << r.run;
    else EXPECT_LT(std::fabs(r.loso_error), 0.02) << r.run;
  }
}

TEST(CalibrationFit, AMeasuredParameterIsHeldThroughTheFitAndWrittenWithWhereItWasMeasured) {
  // Runs synthesised at a GEMM excess of 0.35 and a kernel overhead of 7 us: with the overhead held at
  // its (here: known) measured value, the GEMM excess alone is fitted, and recovered.
  const CostModel cost = CostModel::shipped();
  std::vector<ValidationRun> runs = runs_made_at(cost, {{"gemm_time_excess", 0.35, 0}, {"kernel_overhead", 7e-6, 0}});
  CalibrateOptions o = gemm_excess_options("2026-12-04");
  o.measured = {{"kernel_overhead", 7e-6, 0, "steps.csv, an H100, 2026-11-27"}};
  const CalibrationFit held = fit_calibration(runs, cost, SimOptions{}, o);
  // Held at half the overhead the runs were made with, the GEMM excess takes the rest of the time.
  o.measured.front().value = 3.5e-6;
  const CalibrationFit half = fit_calibration(runs, cost, SimOptions{}, o);
  o.measured.front().value = 7e-6;
  use_shipped_calibrations();
  ASSERT_FALSE(held.profile.parameters.empty());
  const FittedParameter& last = held.profile.parameters.back();
  EXPECT_EQ(last.name, "kernel_overhead");
  EXPECT_EQ(last.value, 7e-6);  // as measured, not moved by the fit
  EXPECT_EQ(last.measured, "steps.csv, an H100, 2026-11-27");
  for (const FittedParameter& f : held.profile.parameters) {
    if (f.name == "gemm_time_excess") {
      EXPECT_NEAR(f.value, 0.35, 0.035);
    }
    if (f.name != "kernel_overhead") {
      EXPECT_TRUE(f.measured.empty()) << f.name;
    }
  }
  for (const CrossValidatedRun& r : held.profile.runs) EXPECT_LT(std::fabs(r.in_sample_error), 0.01) << r.run;
  ASSERT_EQ(half.profile.parameters.front().name, "gemm_time_excess");
  EXPECT_GT(half.profile.parameters.front().value, 0.35 * 1.02);
  EXPECT_EQ(half.profile.parameters.back().value, 3.5e-6);
  // The profile reads back with the measured value's source, and says it was not fitted.
  const std::filesystem::path file = std::filesystem::temp_directory_path() / ("hetsim-held-" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(file) << calibration_profile_text(held.profile);
  const CalibrationProfile back = load_calibration_profile(file);
  std::filesystem::remove(file);
  ASSERT_EQ(back.parameters.size(), held.profile.parameters.size());
  EXPECT_EQ(back.parameters.back().measured, "steps.csv, an H100, 2026-11-27");
  EXPECT_NE(back.describe().find("kernel_overhead 7 us (measured, not fitted)"), std::string::npos) << back.describe();
  // A parameter is measured or fitted, not both.
  o.measured = {{"kernel_overhead", 7e-6, 0, "x"}};
  o.parameters = {"gemm_time_excess", "kernel_overhead"};
  EXPECT_THROW((void)fit_calibration(runs, cost, SimOptions{}, o), InputError);
}

TEST(CalibrationFit, AParameterTheNoiseSwampsBesideAnotherIsRefusedWithItsUncertainty) {
  // Runs at a GEMM excess of 0.35 and no overlap slowdown, measured with +-2 % of noise: compute
  // slowed beside a collective moves them by about 1 % at most, less than the noise, so the fit
  // cannot tell it from none. It is refused, saying so, and the GEMM excess fitted alone.
  const CostModel cost = CostModel::shipped();
  std::vector<ValidationRun> runs = runs_at_excess(cost, 0.35);
  for (size_t i = 0; i < runs.size(); ++i) runs[i].measured.front().value *= i % 2 == 0 ? 1.02 : 0.98;
  CalibrateOptions o = gemm_excess_options("2026-11-29");
  o.parameters = {"gemm_time_excess", "overlap_slowdown"};
  const CalibrationFit fit = fit_calibration(runs, cost, SimOptions{}, o);
  use_shipped_calibrations();
  ASSERT_EQ(fit.profile.parameters.size(), 1u);
  EXPECT_EQ(fit.profile.parameters[0].name, "gemm_time_excess");
  EXPECT_NEAR(fit.profile.parameters[0].value, 0.35, 0.1 * 0.35);
  ASSERT_EQ(fit.refused.size(), 1u);
  EXPECT_NE(fit.refused[0].find("overlap_slowdown: its uncertainty (± "), std::string::npos) << fit.refused[0];
  EXPECT_NE(fit.refused[0].find("cannot tell it from none"), std::string::npos) << fit.refused[0];
}

TEST(CalibrationFit, AParameterLeftAtZeroWithAnUncertaintyOverItsRangeIsRefused) {
  // Runs a hundred times faster than the raw model: no GEMM excess can make a prediction faster, so
  // the fit sits at 0 with an uncertainty over the share's whole range, and nothing is written.
  const CostModel cost = CostModel::shipped();
  std::vector<ValidationRun> runs = runs_at_excess(cost, 0.0);
  for (ValidationRun& r : runs) r.measured.front().value *= 100;
  try {
    (void)fit_calibration(runs, cost, SimOptions{}, gemm_excess_options("2026-11-29"));
    use_shipped_calibrations();
    ADD_FAILURE() << "wrote a profile the runs do not constrain";
  } catch (const InputError& e) {
    use_shipped_calibrations();
    const std::string m = e.diagnostics().front().message;
    EXPECT_NE(m.find("no parameter is left to fit: gemm_time_excess: its uncertainty (± "), std::string::npos) << m;
    EXPECT_NE(m.find("exceeds its whole range (0 to 1)"), std::string::npos) << m;
  }
}

TEST(CalibrationFit, ARunsOwnProfileIsNotInForceWhileFitting) {
  // Runs that name their software stack's profile (`calibration:`, as the shipped run files do once
  // a profile is fitted on them) are fitted as the raw model plus the trial parameters: refitting
  // a shipped profile from its own runs recovers the same value.
  const CostModel cost = CostModel::shipped();
  const double excess = 0.35;
  std::vector<ValidationRun> runs = runs_at_excess(cost, excess);
  for (ValidationRun& r : runs) r.calibration = "megatron-core-2026-b200";  // a shipped profile of the same GPU, another excess
  const CalibrationFit fit = fit_calibration(runs, cost, SimOptions{}, gemm_excess_options("2026-11-29"));
  use_shipped_calibrations();
  ASSERT_EQ(fit.profile.parameters.size(), 1u);
  EXPECT_NEAR(fit.profile.parameters[0].value, excess, 0.1 * excess);
  EXPECT_EQ(fit.profile.era, "2026-11-29");  // no era given: the fit's date
}

TEST(CalibrationFit, AParameterNoRunMovesIsRefusedByName) {
  const CostModel cost = CostModel::shipped();
  // Dense training runs (tests/fixtures/validation/runs.yaml): no expert GEMM to issue.
  const std::vector<ValidationRun> runs = load_runs(test::source_dir() / "tests/fixtures/validation/runs.yaml");
  CalibrateOptions o;
  o.parameters = {"expert_gemm_host"};
  o.date = "2026-11-28";
  const test::RestoreShippedCalibrations restore;
  try {
    (void)fit_calibration(runs, cost, SimOptions{}, o);
    FAIL() << "fitted a parameter no run constrains";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("the runs constrain no parameter"), std::string::npos) << what;
    EXPECT_NE(what.find("expert_gemm_host: no run's prediction moves"), std::string::npos) << what;
    EXPECT_NE(what.find("mixture-of-experts"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace hetsim
