// File: tests/studies/calibration_profiles_test.cpp
// A calibration profile in force: each parameter lengthens the kernels it names and is said as
// calibrated, a profile file is checked line by line, each GPU type takes the shipped profile of its
// most recent era, and none restores the raw model.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <unistd.h>

#include "base/input_error.hpp"
#include "base/temp_dir.hpp"
#include "kernels_profile/calibration_profile.hpp"
#include "kernels_profile/cost_model.hpp"
#include "kernels_profile/device.hpp"
#include "planner/strategies.hpp"
#include "studies/validation/calibration_fit.hpp"
#include "studies/validation/run_evaluation.hpp"
#include "studies/validation/run_file.hpp"
#include "test_support.hpp"
#include "topologies/cluster.hpp"
#include "workloads/op_graph.hpp"

namespace hetsim {
namespace {

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

TEST(CalibrationProfiles, ABlockScaledExcessLengthensBlockScaledGemmsOnlyBeyondTheGemmExcess) {
  // The same GEMM with MXFP8 inputs, FP8 (per-tensor) inputs and in bf16, without casts: the
  // block-scaled share adds to gemm_time_excess on the MXFP8 GEMM alone, said as calibrated.
  Op mx = a_gemm(), fp8 = a_gemm();
  mx.gemm_dtype = DType::kMxfp8;
  fp8.gemm_dtype = DType::kFp8;
  const Op bf16 = a_gemm();
  const CostModel cost = CostModel::shipped();
  Device d = load_device(test::shipped("kernels_profile/devices", "B200"));
  d.fitted = FittedCosts{};
  const auto at = [&](const Op& op) { return cost.op_time(d, op, DType::kBf16, Pass::kBackward); };
  const double raw_mx = at(mx).seconds, raw_fp8 = at(fp8).seconds, raw_bf16 = at(bf16).seconds;
  d.fitted.block_scaled_gemm_time_excess = 0.15;
  EXPECT_DOUBLE_EQ(at(mx).seconds, 1.15 * raw_mx);
  EXPECT_DOUBLE_EQ(at(mx).by_source[static_cast<size_t>(CostSource::kCalibrated)], 0.15 * raw_mx);
  EXPECT_DOUBLE_EQ(at(fp8).seconds, raw_fp8);
  EXPECT_DOUBLE_EQ(at(bf16).seconds, raw_bf16);
  d.fitted.gemm_time_excess = 0.25;
  EXPECT_DOUBLE_EQ(at(mx).seconds, 1.4 * raw_mx);
  EXPECT_DOUBLE_EQ(at(fp8).seconds, 1.25 * raw_fp8);
  EXPECT_TRUE(block_scaled(DType::kNvfp4) && block_scaled(DType::kMxfp4) && !block_scaled(DType::kFp8) && !block_scaled(DType::kBf16));
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

TEST(CalibrationProfiles, AProfileChangesAnExpertGemmAndNoneRestoresTheRawModel) {
  Op op = Op::make("l0.expert_fc1", OpKind::kMoeExpert, 0);
  op.gemm = {16, 8, 1536, 2048};  // 16 local experts, a few rows each: microseconds of GPU work
  op.fwd_flops = 2.0 * 16 * 8 * 1536 * 2048;
  op.bwd_flops = 2 * op.fwd_flops;
  op.fwd_bytes = op.bwd_bytes = 1e6;
  const CostModel cost = CostModel::shipped();
  auto device = [](const std::string& name) { return load_device(test::shipped("kernels_profile/devices", name)); };
  Device d = device("H100-SXM5-80GB");
  EXPECT_GT(d.fitted.moe_layer_s, 0);  // the shipped profile, in force by default (its expert_gemm_host refused)
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
  CalibrationProfile truth;
  truth.name = "truth";
  truth.devices = {"B200"};
  truth.parameters = {{"moe_layer_host", 1e-3, 0}, {"expert_gemm_host", 40e-6, 0}};
  use_calibration_profile(truth);
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

// A run a shipped profile was fitted on is predicted under that profile (its own `calibration`, or the
// default of its GPU type): the table then counts it with its source left out. Predicted under another,
// it would count its in-sample error as if nothing had been fitted on it.
TEST(CalibrationProfiles, EveryRunAShippedProfileIsFittedOnIsPredictedUnderIt) {
  std::map<std::string, ValidationRun> runs;
  for (const char* folder : {"studies/validation", "studies/validation/heldout"}) {
    for (const auto& e : std::filesystem::directory_iterator(test::source_dir() / folder)) {
      if (e.path().extension() != ".yaml") continue;
      for (ValidationRun& r : load_runs(e.path())) runs.emplace(r.name, std::move(r));
    }
  }
  int checked = 0;
  for (const auto& e : std::filesystem::directory_iterator(test::source_dir() / "kernels_profile/calibrations")) {
    const CalibrationProfile p = load_calibration_profile(e.path());
    for (const std::string& name : p.fitted_on) {
      const auto it = runs.find(name);
      ASSERT_NE(it, runs.end()) << p.name << " was fitted on " << name << ", which no shipped run file holds";
      const ValidationRun& run = it->second;
      std::set<std::string> gpus;
      if (run.kind == RunKind::kMatmul) {
        gpus.insert(run.matmul.device);
      } else {
        for (const NodeType& t : load_cluster(run.cluster).node_types) gpus.insert(t.gpu.name);
      }
      const CalibrationScope scope(run.calibration.empty() ? "shipped" : run.calibration);
      EXPECT_TRUE(profiles_in_force(gpus).contains(p.name)) << name << " (fitted on by " << p.name << ")";
      ++checked;
    }
  }
  EXPECT_GT(checked, 40);
}

}  // namespace
}  // namespace hetsim
