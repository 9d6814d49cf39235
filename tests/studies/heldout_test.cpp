// File: tests/studies/heldout_test.cpp
// Published runs held out of the calibration set (studies/validation/heldout/): predicted with a
// profile fitted on another GPU type's runs and transferred to theirs, they test the transfer.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "kernels_profile/calibration_profile.hpp"
#include "studies/validation/run_evaluation.hpp"
#include "test_support.hpp"

namespace hetsim {
namespace {

// The runs of heldout/`file` (`total` of them) whose names contain every text of `with` and none of
// `without`: each evaluated under the shipped profiles, and within 10 % of its measurement when
// `within_ten_percent` (else only predicted: it fits and simulates). Returns how many were.
int check_rows(const std::string& file, size_t total, const std::vector<std::string>& with, const std::vector<std::string>& without,
               bool within_ten_percent) {
  use_shipped_calibrations();
  const std::vector<ValidationRun> runs = load_runs(test::source_dir() / "studies/validation/heldout" / file);
  EXPECT_EQ(runs.size(), total);
  const CostModel cost = CostModel::shipped();
  int checked = 0;
  for (const ValidationRun& run : runs) {
    const auto has = [&](const std::string& t) { return run.name.find(t) != std::string::npos; };
    bool take = true;
    for (const std::string& t : with) take = take && has(t);
    for (const std::string& t : without) take = take && !has(t);
    if (!take) continue;
    const RunResult r = evaluate_run(run, cost, SimOptions{});
    ++checked;
    EXPECT_TRUE(r.failure.empty()) << run.name << ": " << r.failure;
    if (!r.failure.empty() || !within_ten_percent) continue;
    EXPECT_EQ(r.figures.size(), 1u) << run.name;
    if (!r.figures.empty()) {
      EXPECT_LT(std::fabs(r.figures.front().error()), 0.10) << run.name;
    }
  }
  return checked;
}

TEST(HeldOut, GB200RowsArePredictedWithinTenPercentByTheProfileTransferredFromB200) {
  // Megatron-Bridge's DGX-GB200 Llama 3 8B rows (containers 25.09 and 25.11, FP8 current scaling and
  // MXFP8) under megatron-core-2026-b200, fitted on DGX-B200 rows only and transferred to GB200:
  // -4.7 to +3.1 % (2026-12-02); the raw model is 17-28 % fast on the same rows. The file's 26.04.01
  // Llama 3 70B row (-1.4 %) holds too; its Llama 3.1 405B row on 256 GPUs is -15.9 % (docs/validation.md).
  EXPECT_EQ(check_rows("megatron-bridge-gb200.yaml", 6, {}, {"405b"}, true), 5);
}

TEST(HeldOut, BlackwellUltraMoeRowsArePredictedWithinTenPercentByTheProfileTransferredFromB200) {
  // Megatron-Bridge's Qwen3-30B-A3B rows on 8 DGX-B300 and 8 DGX-GB300 GPUs (containers 26.02.01 to
  // 26.04.01, MXFP8, micro-batch 8: the B200 rows' recipe but for the micro-batch) under
  // megatron-core-2026-b200 transferred to B300 and GB300: -0.2 to +5.2 % (2026-12-03); the raw model
  // is 33-40 % fast on the same rows, so the transfer is what these rows test.
  EXPECT_EQ(check_rows("megatron-bridge-blackwell-ultra.yaml", 16, {"qwen3"}, {}, true), 6);
}

TEST(HeldOut, PublishedGB300DenseLayoutsFitInMemoryWithFp8ParamGather) {
  // Llama 3 70B as TP 1 x PP 4 and Llama 3.1 405B as TP 2 x PP 8 x CP 2 on GB300, MXFP8, ran as
  // published; with a 16-bit copy of every FP8 weight beside the FP8 ones hetsim said they needed
  // 272 GiB of 260 (the capacity then read "279 GB" as decimal; 277.5 GiB since 2026-12-03). The
  // recipes' fp8_param_gather keeps no such copy (its bytes: DataParallel.Fp8ParamGather...). One
  // container's rows (the others repeat the layouts).
  EXPECT_EQ(check_rows("megatron-bridge-blackwell-ultra.yaml", 16, {"26.04.01-llama3", "mxfp8"}, {}, false), 2);
}

}  // namespace
}  // namespace hetsim
