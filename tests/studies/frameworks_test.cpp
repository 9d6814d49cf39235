// File: tests/studies/frameworks_test.cpp
// Published runs of trainers no shipped profile stands for (studies/validation/frameworks/): read,
// predicted under the shipped profiles, and held to what they can say about hetsim.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "kernels_profile/calibration_profile.hpp"
#include "studies/validation/run_evaluation.hpp"
#include "test_support.hpp"

namespace hetsim {
namespace {

struct MeasuredPredicted {
  double measured = 0, predicted = 0;
};

TEST(Frameworks, TorchtitansRowsArePredictedAndTheirRatiosBetweenRecipesHold) {
  // torchtitan's benchmark files (Llama 3.1 8B and 70B with FSDP2, TP, torch.compile, Float8; 8 to 256
  // GPUs). Its H100s are Grand Teton parts (96 GB HBM2e, a 500 W cap) hetsim runs as the 700 W, HBM3
  // H100 SXM: their level is not the model's to match (+24 to +68 %, 2026-12-07), but each reads fast,
  // and the ratio of two recipes on the same GPUs is the model's: Float8 over BF16 within 0.6 % on
  // the three pairs that have it (1.28 to 1.36 measured), async TP over vanilla TP on 70B within 3.6 %
  // (1.09 and 1.16 measured). Not held: async TP on 8B at TP 8, 1.24-1.26 predicted where 1.10 ran
  // (docs/validation.md, "torchtitan").
  use_shipped_calibrations();
  const CostModel cost = CostModel::shipped();
  const std::vector<ValidationRun> runs = load_runs(test::source_dir() / "studies/validation/frameworks/torchtitan.yaml");
  EXPECT_EQ(runs.size(), 17u);
  std::map<std::string, MeasuredPredicted> by_name;
  for (const ValidationRun& run : runs) {
    const RunResult r = evaluate_run(run, cost, SimOptions{});
    EXPECT_TRUE(r.failure.empty()) << run.name << ": " << r.failure;
    ASSERT_EQ(r.figures.size(), 1u) << run.name;
    const FigureResult& f = r.figures.front();
    by_name[run.name] = {f.measured, f.predicted};
    if (run.name.find("h200") == std::string::npos) {
      EXPECT_GT(f.error(), 0) << run.name << ": the capped H100s run slower than the uncapped part hetsim times";
    }
  }
  const auto ratio_error = [&](const std::string& over, const std::string& base) {
    const MeasuredPredicted& a = by_name.at(over);
    const MeasuredPredicted& b = by_name.at(base);
    return (a.predicted / b.predicted) / (a.measured / b.measured) - 1;
  };
  const std::string t = "torchtitan-";
  for (const auto& [fp8, bf16] : std::vector<std::pair<std::string, std::string>>{
           {"202412-llama3.1-8b-8gpu-fsdp-compile-float8", "202412-llama3.1-8b-8gpu-fsdp-compile-bf16"},
           {"202412-llama3.1-8b-128gpu-fsdp-compile-float8", "202412-llama3.1-8b-128gpu-fsdp-compile-bf16"},
           {"202506-llama3-70b-256gpu-fsdp32-tp8-float8", "202506-llama3-70b-256gpu-fsdp32-tp8-bf16"}}) {
    EXPECT_NEAR(ratio_error(t + fp8, t + bf16), 0, 0.02) << fp8;
  }
  for (const char* recipe : {"bf16", "float8"}) {
    const std::string run = t + "202506-llama3-70b-256gpu-fsdp32-tp8-";
    EXPECT_NEAR(ratio_error(run + "asynctp-" + recipe, run + recipe), 0, 0.05)
        << recipe;
  }
}

}  // namespace
}  // namespace hetsim
