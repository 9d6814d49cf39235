// File: tests/cli/report_consistency_test.cpp
// Figures of one run that must agree wherever they are shown (physics audit, 2026-12-05): MFU counts
// the model's FLOPs whatever the strategy (two strategies that ran one time reported MFU 0.6554
// and 0.6543), and a trace draws the steps a simulation left out on every GPU that computes them
// (the GPU looked idle for 72 % of an SPMD iteration in Perfetto).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/scratch_dir.hpp"
#include "test_support.hpp"

namespace hetsim {
namespace {

nlohmann::json run_report(const std::string& args, const std::filesystem::path& report) {
  const test::CliRun r = test::run_hetsim(args + " --no-upper-bound --report " + report.string(), test::Capture::kStdout);
  EXPECT_EQ(r.rc, 0) << r.output;
  return nlohmann::json::parse(std::ifstream(report));
}

TEST(ReportConsistency, EveryStrategyCountsTheSameModelFlops) {
  const test::ScratchDir d;
  double flops = 0;
  for (const char* how : {"simulate --strategy dp-even", "simulate --strategy dp-proportional", "plan --no-spmd", "plan --no-pipeline"}) {
    const nlohmann::json j = run_report(std::string(how) + " -c a100-v100-2x2 -m gpt3-1.3b", d.path / "r.json");
    // MFU = model FLOPs / (time x the cluster's peak): the same cluster, so MFU x time is the FLOPs.
    const double f = j["mfu"].get<double>() * j["iteration_time_s"].get<double>();
    if (flops == 0) flops = f;
    EXPECT_NEAR(f, flops, 1e-12 * flops) << how;
  }
}

TEST(ReportConsistency, ATraceDrawsTheStepsLeftOutOnEveryGpuThatComputesThem) {
  const test::ScratchDir d;
  const std::filesystem::path trace = d.path / "t.json";
  // An SPMD program whose steps communicate (the embedding split by features): two steps simulated,
  // the rest extrapolated.
  const std::string cluster = (test::source_dir() / "studies/validation/clusters/dgx-a100-1.yaml").string();
  const nlohmann::json j = run_report("plan --no-pipeline -c " + cluster + " -m gpt3-1.3b --global-batch 128 --trace " + trace.string(),
                                      d.path / "r.json");
  const nlohmann::json t = nlohmann::json::parse(std::ifstream(trace));
  const auto& events = t.is_array() ? t : t["traceEvents"];
  double compute0 = 0;
  int repeated = 0;
  for (const auto& e : events) {
    if (e.value("ph", "") != "X" || e.value("pid", -1) != 0 || e.value("tid", -1) != 0) continue;  // gpu0's compute track
    compute0 += e["dur"].get<double>() * 1e-6;
    repeated += e.value("cat", "") == "repeated" ? 1 : 0;
  }
  const double reported = j["devices"][0]["compute_s"].get<double>();
  EXPECT_EQ(repeated, 1);
  EXPECT_NEAR(compute0, reported, 0.01 * reported);  // was 28 % of it: the steps left out not drawn
}

}  // namespace
}  // namespace hetsim
