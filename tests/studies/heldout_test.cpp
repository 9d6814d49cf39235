// File: tests/studies/heldout_test.cpp
// Published runs held out of the calibration set (studies/validation/heldout/): predicted with a
// profile fitted on another GPU type's runs and transferred to theirs, they test the transfer.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
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
  // MXFP8) under megatron-core-2026-b200, fitted on DGX-B200 rows (and, since 2026-12-07, on GB200's and
  // B300's Nemotron 3 Nano rows, which pin the Mamba scan's excess and move these rows by under 0.2 %):
  // -4.7 to +3.1 % (2026-12-02); the raw model is 17-28 % fast on the same rows. The file's 26.04.01
  // Llama 3 70B row (-2.4 %) holds too; its Llama 3.1 405B rows on 256 GPUs (FP8 and MXFP8, containers
  // 26.02 to 26.04.01, 16 trays a rack) read -0.6 to -9.2 % (2026-12-06, docs/validation.md): read here,
  // predicted by scripts/calibrate (under the sanitizers each would cost CI a minute).
  EXPECT_EQ(check_rows("megatron-bridge-gb200.yaml", 13, {}, {"405b"}, true), 5);
}

TEST(HeldOut, B300MoeRowsArePredictedWithinTenPercentByTheProfileTransferredFromB200) {
  // Megatron-Bridge's Qwen3-30B-A3B rows on 8 DGX-B300 GPUs (containers 26.02.01 to 26.04.01, MXFP8,
  // micro-batch 8: the B200 rows' recipe but for the micro-batch) under megatron-core-2026-b200
  // (transferred to B300 until 2026-12-07, fitted since on its Nemotron 3 Nano rows too, not on these):
  // +0.9 to +5.2 % (2026-12-03); the raw model is 33-40 % fast on the same rows,
  // so the transfer is what these rows test. The same rows on DGX-GB300, which takes only the host
  // time (below), read +13 to +18 %: their small expert GEMMs run slower than the kernel model there
  // too, which one GEMM share for dense and expert GEMMs alike cannot say (docs/validation.md).
  EXPECT_EQ(check_rows("megatron-bridge-blackwell-ultra.yaml", 16, {"qwen3", "b300"}, {"gb300"}, true), 3);
  EXPECT_EQ(check_rows("megatron-bridge-blackwell-ultra.yaml", 16, {"qwen3", "gb300"}, {}, false), 3);
}

TEST(HeldOut, FsdpRowsOffloadingActivationsToTheGraceCpuHoldWithinTenPercent) {
  // Megatron-Bridge's Llama 3 70B FP8 rows under Megatron FSDP with CPU offloading of 20 (GB300) or 40
  // (GB200) of the 80 layers' activations, the copies over NVLink-C2C to the Grace CPU (device files'
  // host_link, a stated model): containers 26.02 to 26.04.01 +0.8 to +9.3 % (2026-12-06). Without
  // offloading neither fits (GB200: 30 layers offloaded leave it 15 GiB short, as its recipe's 40 do not);
  // over GB200's PCIe link instead the copies would stall it 32 % slow. Containers 25.09 and 25.11 run an
  // older Transformer Engine whose schedule differs: predicted, not bounded (+2.4 to +17.1 %; 25.09's
  // 405B on 128 GPUs of two racks, 72 and 56 of them, +14.5 %).
  EXPECT_EQ(check_rows("megatron-bridge-offload.yaml", 12, {"mbridge-26."}, {}, true), 8);
  EXPECT_EQ(check_rows("megatron-bridge-offload.yaml", 12, {"mbridge-25."}, {}, false), 4);
}

TEST(HeldOut, Nvfp4RowsAreReadAndPredicted) {
  // Megatron-Bridge's NVFP4 rows of Llama 3 70B and 3.1 405B on GB200 and GB300 racks (containers 26.04
  // and 26.04.01). NVFP4 GEMMs take the H100's FP8 rows scaled to the format's achievable rate: on GB200
  // at the share of its FP4 peak that its FP8 GEMMs reach of theirs (B200's cuBLASLt FP4 GEMMs, below),
  // the 70B +6.7 and +7.5 %, the 405B -3.7 and -7.6 %; on GB300 at the share Transformer Engine's B300
  // benchmark gives them (te-gemm-b300.yaml), the 405B +1.7 and +2.9 % and the 70B -11.4 and -12.6 %
  // (2026-12-06, docs/validation.md; +14 to +42 % on the roofline before). The GB300 70B rows are
  // predicted, not bounded; the 256-GPU rows run in scripts/calibrate (under the sanitizers each would
  // cost CI a minute).
  EXPECT_EQ(check_rows("megatron-bridge-nvfp4.yaml", 8, {"70b", "gb200"}, {}, true), 2);
  EXPECT_EQ(check_rows("megatron-bridge-nvfp4.yaml", 8, {"70b", "gb300"}, {}, false), 2);
}

TEST(HeldOut, B200sFp4GemmsByCublasLtArePredictedAtLargeShapesAndReadAtSmallOnes) {
  // cuBLASLt's MXFP4 GEMMs on a B200 (DeepGEMM pull request #348): 8192 cubed +5.1 % (2026-12-06). With
  // 128 to 1024 rows hetsim reads them 1.4x to 2.1x fast and 4096 x 4096 x 7168 +27 %: Blackwell's large
  // tiles are not modelled (the H100's rows scaled by the rate). Read and predicted, not bounded.
  EXPECT_EQ(check_rows("deepgemm-b200-fp4.yaml", 7, {"8192x8192x8192"}, {}, true), 1);
  EXPECT_EQ(check_rows("deepgemm-b200-fp4.yaml", 7, {}, {"8192x8192x8192"}, false), 6);
}

TEST(HeldOut, TransformerEnginesB300GemmBenchmarkSetsNvfp4AndChecksTheOtherFormats) {
  // Transformer Engine's published B300 GEMM benchmark of one layer's 12 GEMMs (pre-quantized, kernels
  // only): the NVFP4 rows, against the MXFP8 ones, set B300's efficiency.matmul_per_dtype.nvfp4 (in
  // sample: hetsim's NVFP4/MXFP8 time ratio over the three directions is the measured 3.764 / 7.162, the directions summed);
  // BF16 and FP8 are held out: -1.5 to -8.8 % (2026-12-06). MXFP8 reads 10.1-11.6 % fast (hetsim runs
  // it at the FP8 rate; Megatron-Core's profile adds a block-scaled GEMM share), and NVFP4 with it.
  EXPECT_EQ(check_rows("te-gemm-b300.yaml", 12, {"-bf16-"}, {}, true), 3);
  EXPECT_EQ(check_rows("te-gemm-b300.yaml", 12, {"-fp8-"}, {}, true), 3);
  use_shipped_calibrations();
  const CostModel cost = CostModel::shipped();
  double nvfp4 = 0, mxfp8 = 0;
  for (const ValidationRun& run : load_runs(test::source_dir() / "studies/validation/heldout/te-gemm-b300.yaml")) {
    const bool is_nvfp4 = run.name.find("-nvfp4-") != std::string::npos, is_mxfp8 = run.name.find("-mxfp8-") != std::string::npos;
    if (!is_nvfp4 && !is_mxfp8) continue;
    const RunResult r = evaluate_run(run, cost, SimOptions{});
    ASSERT_EQ(r.figures.size(), 1u) << run.name;
    (is_nvfp4 ? nvfp4 : mxfp8) += r.figures.front().predicted;
  }
  EXPECT_NEAR(nvfp4 / mxfp8, 3.764 / 7.162, 0.003);
}

TEST(HeldOut, LumiMi250xRowsAreReadAndTheSmallerOnesPredicted) {
  // The LUMI scaling study's Megatron-DeepSpeed runs (2023, ROCm 5.2) on MI250X, which no profile
  // covers: the raw model reads them 36-42 % fast in iteration time, and the 7B's throughput +69 %
  // (docs/validation.md). Here: every row is read, and the 7B's and the 175B's on 16 and 32 nodes fit
  // and simulate (the larger ones run in scripts/calibrate: under the sanitizers they cost CI a minute).
  EXPECT_EQ(check_rows("lumi-mi250x.yaml", 6, {}, {"512gcd", "1024gcd", "2048gcd"}, false), 3);
}

TEST(HeldOut, AzuresFp8GemmsOnH100AgreeWithOursAndItsAllReducesWithTheLinkModel) {
  // The Azure AI benchmarking guide's cuBLASLt FP8 GEMMs on an H100 (2024) against hetsim's own
  // measured FP8 rows (torch._scaled_mm, 2026): -2.7 to +4.5 % from 4096 up (the small ones, timed
  // there with their launch, 27-30 % fast). Its NCCL all-reduces on A100, H100, H200 and a 4-GPU GB200
  // VM: +0.1 to +9.1 % (2026-12-05).
  EXPECT_EQ(check_rows("azure-benchmarks.yaml", 43, {"h100-gemm"}, {"-1024x", "-2048x"}, true), 6);
  EXPECT_EQ(check_rows("azure-benchmarks.yaml", 43, {"allreduce"}, {}, true), 8);
  EXPECT_EQ(check_rows("azure-benchmarks.yaml", 43, {"gemm"}, {"h100"}, false), 26);  // predicted, not bounded
}

TEST(HeldOut, MegatronFsdpOnH100IsPredictedWithinTenPercent) {
  // Megatron-Bridge's Llama 3 8B on 8 H100 with Megatron FSDP, held out: container 25.09 +7.2 % (+2.0 %
  // until ZeRO-3's gathers ran under the passes, 2026-12-06), 25.11 with the first 5 of 32 layers
  // recomputed -0.1 %. The file's DeepSeek-V3 and B200 Qwen3-235B-A22B rows (+13.3 to +14.3 %, and
  // -8.2 % with EP over 4 nodes) run in scripts/calibrate, minutes each (docs/validation.md).
  EXPECT_EQ(check_rows("megatron-bridge-extra.yaml", 7, {"llama3-8b"}, {}, true), 2);
}

TEST(HeldOut, GptOssRowsAreReadAndPredicted) {
  // Megatron-Bridge's GPT-OSS-120B BF16 rows (sliding windows on every other layer; containers 26.02
  // to 26.04.01 on 64 H100, 64 B200 with EP 8 and with EP 64 over 8 nodes, 64 GB200 and GB300): every
  // one fits and simulates. Not bounded: hetsim reads them 12-34 % fast (20-52 % before the experts'
  // eager bias and clamped GLU were costed, 2026-12-06), a miss no profile was fitted to and
  // docs/validation.md states as such.
  EXPECT_EQ(check_rows("megatron-bridge-gpt-oss.yaml", 8, {}, {}, false), 8);
}

TEST(HeldOut, Qwen3InBf16OnH100IsReadAndPredicted) {
  // Megatron-Bridge's own Qwen3-30B-A3B BF16 runs on 16 H100, EP 16 over two nodes (its skills/ notes,
  // 2026-07-25), with and without expert-parallel overlap: both fit and simulate. Not bounded: hetsim
  // reads their step 14 and 19 % slow (2026-12-06), where GPT-OSS's BF16 rows read fast.
  EXPECT_EQ(check_rows("megatron-bridge-skills.yaml", 2, {}, {}, false), 2);
}

TEST(HeldOut, AGB200ToGB300SwapReadsAsMeasured) {
  // The same model on both racks in container 26.04.01: Llama 3 70B MXFP8 on 64 GPUs, 3712 tokens/s
  // per GPU on GB200 (TP 2) and 4864 on GB300 (TP 1), 1.31x. hetsim read 1.01x while GB300 took
  // B200's GEMM excess whole; a what-if between the two must say what the hardware does.
  use_shipped_calibrations();
  const CostModel cost = CostModel::shipped();
  const auto tokens = [&](const std::string& file, const std::string& name, bool predicted) {
    for (const ValidationRun& run : load_runs(test::source_dir() / "studies/validation/heldout" / file)) {
      if (run.name != name) continue;
      const RunResult r = evaluate_run(run, cost, SimOptions{});
      EXPECT_TRUE(r.failure.empty()) << r.failure;
      if (r.figures.empty()) return 0.0;
      return predicted ? r.figures.front().predicted : r.figures.front().measured;
    }
    ADD_FAILURE() << name;
    return 0.0;
  };
  const std::string gb200 = "mbridge-26.04.01-llama3-70b-gb200-64gpu-mxfp8", gb300 = "mbridge-26.04.01-llama3-70b-gb300-64gpu-mxfp8";
  const double measured = tokens("megatron-bridge-blackwell-ultra.yaml", gb300, false) / tokens("megatron-bridge-gb200.yaml", gb200, false);
  const double predicted = tokens("megatron-bridge-blackwell-ultra.yaml", gb300, true) / tokens("megatron-bridge-gb200.yaml", gb200, true);
  EXPECT_NEAR(measured, 1.31, 0.01);
  EXPECT_NEAR(predicted / measured, 1.0, 0.10) << predicted << " against " << measured;
}

TEST(HeldOut, PublishedGB300DenseLayoutsFitInMemoryAndHoldWithinTenPercent) {
  // Llama 3 70B as TP 1 x PP 4 and Llama 3.1 405B as TP 2 x PP 8 x CP 2 on GB300, MXFP8, ran as
  // published; with a 16-bit copy of every FP8 weight beside the FP8 ones hetsim said they needed
  // 272 GiB of 260 (the capacity then read "279 GB" as decimal; 277.5 GiB since 2026-12-03). The
  // recipes' fp8_param_gather keeps no such copy (its bytes: DataParallel.Fp8ParamGather...). One
  // container's rows (the others repeat the layouts). megatron-core-2026-b200 carries only
  // moe_layer_host to GB300 (its transfer's `parameters`), chosen on this file's rows: with B200's
  // gemm_time_excess too, GB300's dense rows read 19-30 % slow; without it, its MXFP8 rows -4.4 to
  // +1.9 % (these two -4.4 and -1.2 %; the FP8-CS 405B rows -9 to -13 %). In sample for that choice.
  EXPECT_EQ(check_rows("megatron-bridge-blackwell-ultra.yaml", 16, {"26.04.01-llama3", "mxfp8"}, {}, true), 2);
}


TEST(HeldOut, NemotronNanoHybridRowsOnGb300HoldWithinTenPercent) {
  // The first hybrid Mamba-Transformer-MoE rows. Those on H100, B200, GB200 and B300 are in the
  // calibration set since 2026-12-07 (megatron-bridge-hybrid.yaml: megatron-core-2026 and
  // megatron-core-2026-b200 fit the Mamba scan's excess on them). The four GB300 rows stay held out:
  // megatron-core-2026-b200 transfers the scan's excess to GB300, and they read +2.4 to +8.0 % with it
  // (+32 to +39 % with the scan at its roofline).
  EXPECT_EQ(check_rows("megatron-bridge-nemotron-nano.yaml", 4, {"gb300"}, {}, true), 4);
}

TEST(HeldOut, NemotronSuperNvfp4OverMxfp8HoldsOnGb300WithItsPrecisionMap) {
  // The first latent-MoE rows (container 26.06, 64 GPUs, MXFP8 and NVFP4): all six load; the two GB300
  // ones are predicted here, within 10 % (+2.9 and +3.0 %, 2026-12-07, with the scan's excess that
  // megatron-core-2026-b200 fits on Nemotron 3 Nano's rows; +25.9 and +26.7 % with the scan at its
  // roofline; the others by scripts/calibrate, under the sanitizers each would cost CI a minute). Their
  // ratio checks the NVFP4 recipe's precision map (attention, the latent projections, the last 14 layers
  // and the MTP passes in BF16, mamba_out in MXFP8): NVFP4 ran 2.6 % faster than MXFP8, hetsim says 2.6 %
  // (10.4 % with every recipe GEMM in NVFP4, before the scan's excess).
  use_shipped_calibrations();
  const CostModel cost = CostModel::shipped();
  std::map<std::string, double> predicted, measured;
  const std::vector<ValidationRun> runs = load_runs(test::source_dir() / "studies/validation/heldout/megatron-bridge-nemotron-super.yaml");
  EXPECT_EQ(runs.size(), 6u);
  for (const ValidationRun& run : runs) {
    if (run.name.find("gb300") == std::string::npos) continue;
    const RunResult r = evaluate_run(run, cost, SimOptions{});
    ASSERT_TRUE(r.failure.empty()) << r.failure;
    ASSERT_EQ(r.figures.size(), 1u);
    const std::string format = run.name.ends_with("nvfp4") ? "nvfp4" : "mxfp8";
    predicted[format] = r.figures.front().predicted;
    measured[format] = r.figures.front().measured;
    EXPECT_LT(std::fabs(r.figures.front().error()), 0.10) << run.name;
  }
  ASSERT_EQ(predicted.size(), 2u);
  EXPECT_NEAR(predicted["nvfp4"] / predicted["mxfp8"], measured["nvfp4"] / measured["mxfp8"], 0.02);
}

}  // namespace
}  // namespace hetsim
