// File: tests/studies/calibration_fit_test.cpp
// Calibration profiles and `hetsim calibrate`'s fit: the surrogate's fit recovers known values and
// leaves sources out as stated, a fit on runs synthesised at known parameters recovers them, an
// unconstrained parameter is refused, a profile changes predictions and none restores the raw model.
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

// A Llama-like layer's FC1 GEMM (8192 tokens, 4096 -> 14336) and the norm before it, in 16 bits.
Op a_gemm() {
  Op gemm = Op::make("l0.fc1", OpKind::kLinear, 0);
  gemm.gemm = {1, 8192, 14336, 4096};
  gemm.fwd_flops = 2.0 * 8192 * 14336 * 4096;
  gemm.bwd_flops = 2 * gemm.fwd_flops;
  gemm.fwd_bytes = gemm.bwd_bytes = 2.0 * (8192 * 4096 + 4096 * 14336 + 8192 * 14336);
  return gemm;
}
Op a_norm() {
  Op norm = Op::make("l0.norm", OpKind::kLayerNorm, 0);
  norm.fwd_bytes = norm.bwd_bytes = 2.0 * 8192 * 4096 * 2;
  return norm;
}

TEST(CalibrationProfiles, AGemmTimeExcessLengthensGemmsOnlyAndIsSaidAsCalibrated) {
  const Op gemm = a_gemm(), norm = a_norm();
  const CostModel cost = CostModel::shipped();
  Device d = load_device(test::shipped("kernels_profile/devices", "B200"));
  d.fitted = FittedCosts{};
  const double raw = cost.op_time(d, gemm, DType::kBf16, Pass::kBackward).seconds;
  const double raw_norm = cost.op_time(d, norm, DType::kBf16, Pass::kForward).seconds;
  d.fitted.gemm_time_excess = 0.25;
  const OpCost c = cost.op_time(d, gemm, DType::kBf16, Pass::kBackward);
  EXPECT_DOUBLE_EQ(c.seconds, 1.25 * raw);
  EXPECT_DOUBLE_EQ(c.by_source[static_cast<size_t>(CostSource::kCalibrated)], 0.25 * raw);
  EXPECT_DOUBLE_EQ(cost.op_time(d, norm, DType::kBf16, Pass::kForward).seconds, raw_norm);  // not a GEMM
  // fp32 GEMMs run other kernels than the tensor-core ones: untouched by that share, lengthened by
  // their own (and the tensor-core formats untouched by it).
  d.fitted = FittedCosts{};
  const double raw_fp32 = cost.op_time(d, gemm, DType::kFp32, Pass::kBackward).seconds;
  const double raw_tf32 = cost.op_time(d, gemm, DType::kTf32, Pass::kBackward).seconds;
  d.fitted.gemm_time_excess = 0.25;
  EXPECT_DOUBLE_EQ(cost.op_time(d, gemm, DType::kFp32, Pass::kBackward).seconds, raw_fp32);
  EXPECT_DOUBLE_EQ(cost.op_time(d, gemm, DType::kTf32, Pass::kBackward).seconds, 1.25 * raw_tf32);
  d.fitted = FittedCosts{};
  d.fitted.fp32_gemm_time_excess = 0.5;
  EXPECT_DOUBLE_EQ(cost.op_time(d, gemm, DType::kFp32, Pass::kBackward).seconds, 1.5 * raw_fp32);
  EXPECT_DOUBLE_EQ(cost.op_time(d, gemm, DType::kTf32, Pass::kBackward).seconds, raw_tf32);
  EXPECT_DOUBLE_EQ(cost.op_time(d, gemm, DType::kBf16, Pass::kBackward).seconds, raw);
}

TEST(CalibrationProfiles, AKernelOverheadIsPaidOnceAKernelAndSaidAsCalibrated) {
  // A GEMM's forward is one kernel, its backward two (three with the forward recomputed); a norm's
  // pass one.
  Op gemm = a_gemm();
  const Op norm = a_norm();
  const CostModel cost = CostModel::shipped();
  Device d = load_device(test::shipped("kernels_profile/devices", "B200"));
  d.fitted = FittedCosts{};
  const auto at = [&](const Op& op, Pass pass) { return cost.op_time(d, op, DType::kBf16, pass); };
  const double fwd = at(gemm, Pass::kForward).seconds, bwd = at(gemm, Pass::kBackward).seconds;
  const double norm_bwd = at(norm, Pass::kBackward).seconds;
  gemm.recompute_flops = gemm.fwd_flops;
  const double recomputed = at(gemm, Pass::kBackward).seconds;
  d.fitted.kernel_overhead_s = 5e-6;
  EXPECT_NEAR(at(gemm, Pass::kBackward).seconds - recomputed, 3 * 5e-6, 1e-15);
  gemm.recompute_flops = 0;
  EXPECT_NEAR(at(gemm, Pass::kForward).seconds - fwd, 5e-6, 1e-15);
  const OpCost c = at(gemm, Pass::kBackward);
  EXPECT_NEAR(c.seconds - bwd, 2 * 5e-6, 1e-15);
  EXPECT_NEAR(c.by_source[static_cast<size_t>(CostSource::kCalibrated)], 2 * 5e-6, 1e-15);
  EXPECT_NEAR(at(norm, Pass::kBackward).seconds - norm_bwd, 5e-6, 1e-15);
}

TEST(CalibrationProfiles, AMemoryBoundExcessLengthensTheOtherKernelsOnlyAndIsSaidAsCalibrated) {
  const Op gemm = a_gemm(), norm = a_norm();
  Op fp8 = gemm;  // an FP8 GEMM's casts are memory-bound kernels of their own
  fp8.gemm_dtype = DType::kFp8;
  fp8.cast_fwd_bytes = 8192.0 * 4096 * 3;
  const CostModel cost = CostModel::shipped();
  Device d = load_device(test::shipped("kernels_profile/devices", "H100-SXM5-80GB"));
  d.fitted = FittedCosts{};
  const double raw_gemm = cost.op_time(d, gemm, DType::kBf16, Pass::kForward).seconds;
  const OpCost raw_norm = cost.op_time(d, norm, DType::kBf16, Pass::kForward);
  const double raw_fp8 = cost.op_time(d, fp8, DType::kBf16, Pass::kForward).seconds;
  Op uncast = fp8;
  uncast.cast_fwd_bytes = 0;
  const double raw_cast = raw_fp8 - cost.op_time(d, uncast, DType::kBf16, Pass::kForward).seconds;
  ASSERT_GT(raw_cast, 0);
  const double raw_opt = cost.optimizer_time(d, 1e9, 16).seconds;
  d.fitted.memory_bound_time_excess = 0.4;
  const OpCost c = cost.op_time(d, norm, DType::kBf16, Pass::kForward);
  EXPECT_DOUBLE_EQ(c.seconds, 1.4 * raw_norm.seconds);
  EXPECT_DOUBLE_EQ(c.by_source[static_cast<size_t>(CostSource::kCalibrated)], 0.4 * raw_norm.seconds);
  EXPECT_DOUBLE_EQ(cost.op_time(d, gemm, DType::kBf16, Pass::kForward).seconds, raw_gemm);  // a GEMM: untouched
  EXPECT_NEAR(cost.op_time(d, fp8, DType::kBf16, Pass::kForward).seconds, raw_fp8 + 0.4 * raw_cast, 1e-12 * raw_fp8);
  const OpCost opt = cost.optimizer_time(d, 1e9, 16);
  EXPECT_DOUBLE_EQ(opt.seconds, 1.4 * raw_opt);
  EXPECT_DOUBLE_EQ(opt.by_source[static_cast<size_t>(CostSource::kCalibrated)], opt.seconds - raw_opt);
}

TEST(CalibrationProfiles, AnOverlapSlowdownIsSaidWhereCollectivesSlowCompute) {
  const ModelSpec model = load_model(test::shipped("workloads", "gpt3-1.3b"));
  Cluster cluster = test::shipped_cluster("pair-a100-h100");  // the H100's interference is measured, the A100's not
  const auto line = [&] {
    for (const std::string& a : assumptions(model, cluster, CostModel::shipped())) {
      if (a.starts_with("compute beside a collective")) return a;
    }
    return std::string();
  };
  EXPECT_EQ(line().find("overlap_slowdown"), std::string::npos) << line();
  EXPECT_NE(line().find("not slowed on A100-SXM4-80GB (not measured)"), std::string::npos) << line();
  for (NodeType& nt : cluster.node_types) {
    if (nt.gpu.name == "A100-SXM4-80GB") nt.gpu.fitted.overlap_slowdown = 0.2;
  }
  const std::string said = line();
  EXPECT_NE(said.find("slowed as measured, H100-SXM5-80GB"), std::string::npos) << said;
  EXPECT_NE(said.find("slowed by the calibration profile's overlap_slowdown, A100-SXM4-80GB 1.20x"), std::string::npos) << said;
  EXPECT_EQ(said.find("not slowed on"), std::string::npos) << said;
}

TEST(CalibrationProfiles, ADeviceListedTwiceOrAShareOutOfItsRangeIsRefusedWithItsLine) {
  const std::filesystem::path file = std::filesystem::temp_directory_path() / ("hetsim-bad-profile-" + std::to_string(::getpid()) + ".yaml");
  auto refusal = [&](const std::string& devices, const std::string& value) {
    std::ofstream(file) << "name: t\nsoftware: \"x\"\nfitted: 2026-11-29\ndevices: " << devices
                        << "\nparameters:\n  overlap_slowdown: {value: " << value << ", uncertainty: 0.01}\nfitted_on: [a]\n";
    try {
      (void)load_calibration_profile(file);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("loaded");
  };
  EXPECT_EQ(refusal("[A100-SXM4-40GB]", "0.2"), "loaded");
  EXPECT_NE(refusal("[A100-SXM4-40GB, A100-SXM4-40GB]", "0.2").find(":4:10: error: devices: \"A100-SXM4-40GB\" is listed twice"),
            std::string::npos);
  EXPECT_NE(refusal("[A100-SXM4-40GB]", "1.0000001").find("parameters.overlap_slowdown.value: 1.0000001 is over 1, compute over twice"),
            std::string::npos);
  EXPECT_NE(refusal("[A100-SXM4-40GB]", "-0.1").find("parameters.overlap_slowdown.value: -0.1 is out of range"), std::string::npos);
  EXPECT_NE(refusal("[A100-SXM4-40GB]", "nan").find("parameters.overlap_slowdown.value: \"nan\" is not a number"), std::string::npos);
  EXPECT_NE(refusal("[A100-SXM4-40GB]", "-0.1").find("expected at least 0"), std::string::npos);  // not a made-up bound
  EXPECT_NE(refusal("[A100-SXM4-40GB]", "1e300").find("is over 1, compute over twice"), std::string::npos);
  std::filesystem::remove(file);
}

TEST(CalibrationProfiles, AProfileFileForOtherGpuTypesIsSaidNotSilentlyDropped) {
  CalibrationProfile h100;
  h100.name = "h100-only";
  h100.file = "h100-only.yaml";
  h100.devices = {"H100-SXM5-80GB"};
  h100.parameters = {{"gemm_time_excess", 0.2, 0.01}};
  use_calibration_profile(h100);
  const ModelSpec model = load_model(test::shipped("workloads", "gpt3-1.3b"));
  const Cluster a100 = test::shipped_cluster("a100-8x8");
  const std::vector<std::string> said = assumptions(model, a100, CostModel::shipped());
  use_shipped_calibrations();
  const bool named = std::any_of(said.begin(), said.end(), [](const std::string& a) {
    return a == "calibration: the profile in force, h100-only (h100-only.yaml), lists none of these GPU types (it lists H100-SXM5-80GB): the raw model";
  });
  EXPECT_TRUE(named);
}

TEST(CalibrationProfiles, EachGpuTypeTakesTheShippedProfileOfItsMostRecentEra) {
  // Pinned, so that a refit that changes which profile a GPU type takes by default is seen. All
  // were fitted in the same days; their eras decide: the A100 80GB is listed by
  // megatron-lm-2021-a100 (2022-05) and dle-pytorch-bert-2022 (2022-03), the A100 40GB by the
  // first and dle-pytorch-bert-2020 (2020-06), the V100s by both DLE profiles; MI300X is
  // primus-2026's by transfer, MI250X no profile's.
  auto in_force = [](const std::string& gpu) {
    const std::optional<CalibrationProfile> p = calibration_for(gpu);
    return p ? p->name : std::string("none");
  };
  EXPECT_EQ(in_force("A100-SXM4-80GB"), "megatron-lm-2021-a100");
  EXPECT_EQ(in_force("A100-SXM4-40GB"), "megatron-lm-2021-a100");
  EXPECT_EQ(in_force("V100-SXM2-32GB"), "dle-pytorch-bert-2022");
  EXPECT_EQ(in_force("V100-SXM2-16GB"), "dle-pytorch-bert-2022");
  EXPECT_EQ(in_force("H100-SXM5-80GB"), "megatron-core-2026");
  EXPECT_EQ(in_force("B200"), "megatron-core-2026-b200");
  EXPECT_EQ(in_force("MI325X"), "primus-2026");
  EXPECT_EQ(in_force("MI355X"), "primus-2026");
  EXPECT_EQ(in_force("MI300X"), "primus-2026");
  EXPECT_EQ(in_force("MI250X"), "none");
}

TEST(CalibrationProfiles, ABarComesFromRowsOfTheStackInForceOnThisTimeModel) {
  // The shipped calibration: a V100 16GB plan (the 2022 BERT profile in force by default) takes
  // the 2022 rows measured on V100 32GB (the same chip: the same time model); an edited copy of
  // that profile under its name is another profile, whose bar says so.
  const std::string base = "simulate --no-upper-bound --global-batch 128 -m '" +
                           (test::source_dir() / "studies/validation/models/bert-large-seq128-mb16-fp16.yaml").string() + "' -c '" +
                           (test::source_dir() / "studies/validation/clusters/1xv100-16gb.yaml").string() + "'";
  const test::CliRun twin = test::run_hetsim(base, test::Capture::kStdout);
  ASSERT_EQ(twin.rc, 0) << twin.output;
  EXPECT_NE(twin.output.find("calibration rows: DLE BERT 2022 V100 mixed precision)"), std::string::npos) << twin.output;
  std::ifstream in(test::source_dir() / "kernels_profile/calibrations/dle-pytorch-bert-2022.yaml");
  std::string edited((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t at = edited.find("gemm_time_excess: {value: ");
  ASSERT_NE(at, std::string::npos);
  edited.replace(at, std::string("gemm_time_excess: {value: 0.4").size(), "gemm_time_excess: {value: 0.9");
  const TempDir dir("calibration-edited");
  const std::filesystem::path copy = dir.path() / "edited.yaml";
  std::ofstream(copy) << edited;
  const test::CliRun other = test::run_hetsim(base + " --calibration '" + copy.string() + "'", test::Capture::kStdout);
  ASSERT_EQ(other.rc, 0) << other.output;
  EXPECT_NE(other.output.find("rows of another calibration profile"), std::string::npos) << other.output;
}

TEST(CalibrationFit, AParameterNoRunMovesIsRefusedByName) {
  const CostModel cost = CostModel::shipped();
  // Dense training runs (tests/fixtures/validation/runs.yaml): no expert GEMM to issue.
  const std::vector<ValidationRun> runs = load_runs(test::source_dir() / "tests/fixtures/validation/runs.yaml");
  CalibrateOptions o;
  o.parameters = {"expert_gemm_host"};
  o.date = "2026-11-28";
  struct Restore {
    ~Restore() { use_shipped_calibrations(); }
  } restore;
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

TEST(CalibrationProfiles, AProfileChangesAnExpertGemmAndNoneRestoresTheRawModel) {
  Op op = Op::make("l0.expert_fc1", OpKind::kMoeExpert, 0);
  op.gemm = {16, 8, 1536, 2048};  // 16 local experts, a few rows each: microseconds of GPU work
  op.fwd_flops = 2.0 * 16 * 8 * 1536 * 2048;
  op.bwd_flops = 2 * op.fwd_flops;
  op.fwd_bytes = op.bwd_bytes = 1e6;
  const CostModel cost = CostModel::shipped();
  auto device = [](const std::string& name) { return load_device(test::shipped("kernels_profile/devices", name)); };
  Device d = device("H100-SXM5-80GB");
  EXPECT_GT(d.fitted.expert_gemm_s, 0);  // the shipped profile, in force by default
  d.fitted = FittedCosts{};                // the raw model
  const double raw_fwd = cost.op_time(d, op, DType::kBf16, Pass::kForward).seconds;
  const double raw_bwd = cost.op_time(d, op, DType::kBf16, Pass::kBackward).seconds;
  d.fitted.expert_gemm_s = 50e-6;
  const OpCost fwd = cost.op_time(d, op, DType::kBf16, Pass::kForward);
  EXPECT_DOUBLE_EQ(fwd.seconds, 16 * 50e-6);  // one issue per local expert, longer than the kernels
  EXPECT_DOUBLE_EQ(fwd.by_source[static_cast<size_t>(CostSource::kCalibrated)], 16 * 50e-6 - raw_fwd);
  EXPECT_DOUBLE_EQ(cost.op_time(d, op, DType::kBf16, Pass::kBackward).seconds, 2 * 16 * 50e-6);
  d.fitted = FittedCosts{};
  EXPECT_DOUBLE_EQ(cost.op_time(d, op, DType::kBf16, Pass::kForward).seconds, raw_fwd);
  EXPECT_DOUBLE_EQ(cost.op_time(d, op, DType::kBf16, Pass::kBackward).seconds, raw_bwd);
  // Loaded devices take the profile in force.
  use_calibration_profile(profile_at(1e-3, 40e-6));
  EXPECT_DOUBLE_EQ(device("B200").fitted.expert_gemm_s, 40e-6);
  EXPECT_NE(device("B200").calibration.find("truth"), std::string::npos);
  EXPECT_DOUBLE_EQ(device("H100-SXM5-80GB").fitted.expert_gemm_s, 0);  // not listed
  use_no_calibration();
  EXPECT_EQ(device("B200").fitted, FittedCosts{});
  EXPECT_EQ(device("B200").calibration, "");
  use_shipped_calibrations();
}

TEST(CalibrationProfiles, TheShippedProfileIsInForceByDefaultAndNoneGivesTheRawModel) {
  // `validate` of some runs of a shipped file with the profiles in force by default and with
  // --calibration none: the rows a profile was fitted on say so (and count with their left-out
  // error) by default, and take the raw model with none, also where a run names its stack's profile.
  auto command = [](const std::string& file, const std::string& only) {
    return "validate --runs '" + (test::source_dir() / "studies/validation" / file).string() + "' --only " + only;
  };
  auto compare = [](const std::string& run, const std::string& profile) {
    SCOPED_TRACE(run);
    const test::CliRun shipped = test::run_hetsim(run, test::Capture::kStdout);
    const test::CliRun none = test::run_hetsim(run + " --calibration none", test::Capture::kStdout);
    ASSERT_EQ(shipped.rc, 0) << shipped.output;
    ASSERT_EQ(none.rc, 0) << none.output;
    EXPECT_NE(shipped.output.find("[fitted on by " + profile + "; source left out:"), std::string::npos) << shipped.output;
    EXPECT_EQ(none.output.find("fitted on by"), std::string::npos) << none.output;
    EXPECT_NE(shipped.output, none.output);
  };
  const std::string run = command("megatron-bridge.yaml", "26.04-qwen3-30b-a3b-b200");
  compare(run, "megatron-core-2026-b200");
  compare(command("dle-bert-2022.yaml", "1xV100-32GB-mixed"), "dle-pytorch-bert-2022");  // its runs name their profile
  const test::CliRun bad = test::run_hetsim(run + " --calibration no-such-profile", test::Capture::kStderr);
  EXPECT_EQ(bad.rc, 2);
  EXPECT_NE(bad.output.find("calibration profile"), std::string::npos) << bad.output;
}

}  // namespace
}  // namespace hetsim
