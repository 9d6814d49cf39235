// File: tests/studies/published_mfu_test.cpp
// The highest published MFU per GPU and kind of training (studies/validation/mfu/published-mfu.yaml):
// the shipped table loads, a run finds the figure of its GPUs, setting and GEMM format or none,
// and `simulate` says when its MFU is above it.
#include "base/text.hpp"
#include "studies/validation/published_mfu.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "base/data_dir.hpp"
#include "test_support.hpp"

namespace hetsim {
namespace {

Cluster one_type(const std::string& gpu) {
  const auto path = std::filesystem::temp_directory_path() / ("hetsim_mfu_" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(path) << "name: t\nnode_types:\n  - {name: a, count: 2, gpu: " << gpu
                      << ", gpus_per_node: 8, intra_node: {fabric: nvswitch, bandwidth: 300GBps, latency: 1us}, "
                         "nic: {count: 8, bandwidth: 200Gbps, latency: 2us}}\nnetwork: {topology: fat-tree, switch_latency: 1us}\n";
  Cluster c = load_cluster(path);
  std::filesystem::remove(path);
  return c;
}

TEST(PublishedMfu, EachRunFindsTheFigureOfItsGpusSettingAndGemmFormatOrNone) {
  const std::vector<PublishedMfu>& table = shipped_published_mfu();
  ASSERT_GE(table.size(), 5u);
  for (const PublishedMfu& m : table) EXPECT_FALSE(m.source.empty()) << m.gpu;
  const ModelSpec gpt = load_model(test::shipped("workloads", "gpt3-1.3b"));
  const std::optional<PublishedMfu> a100 = published_mfu_ceiling(table, gpt, one_type("A100-SXM4-80GB"));
  ASSERT_TRUE(a100.has_value());
  EXPECT_DOUBLE_EQ(a100->mfu, 0.563);
  // 16-bit dense training on H100: Megatron-LM's own figure, not the FP8 one.
  const std::optional<PublishedMfu> h100_bf16 = published_mfu_ceiling(table, gpt, one_type("H100-SXM5-80GB"));
  ASSERT_TRUE(h100_bf16.has_value());
  EXPECT_DOUBLE_EQ(h100_bf16->mfu, 0.48);
  // MoE training in 16 bits on H100: Megatron-Bridge's own Qwen3-30B-A3B BF16 run, not the FP8 MoE figure.
  ModelSpec moe = load_model(test::shipped("workloads", "mixtral-8x7b"));
  moe.training.gemm_precision = GemmPrecision::kDtype;
  const std::optional<PublishedMfu> h100_moe = published_mfu_ceiling(table, moe, one_type("H100-SXM5-80GB"));
  ASSERT_TRUE(h100_moe.has_value());
  EXPECT_DOUBLE_EQ(h100_moe->mfu, 0.3537);
  // Nothing published for MoE training in fp32: no figure, rather than another's.
  ModelSpec fp32_moe = moe;
  fp32_moe.training.dtype = DType::kFp32;
  EXPECT_FALSE(published_mfu_ceiling(table, fp32_moe, one_type("H100-SXM5-80GB")).has_value());
  // The same model with FP8 GEMMs on H100: the FP8 dense figure.
  ModelSpec fp8 = gpt;
  fp8.training.gemm_precision = GemmPrecision::kFp8Current;
  EXPECT_EQ(mfu_gemm(fp8), "fp8");
  const std::optional<PublishedMfu> h100 = published_mfu_ceiling(table, fp8, one_type("H100-SXM5-80GB"));
  ASSERT_TRUE(h100.has_value());
  EXPECT_NEAR(h100->mfu, 784 / 989.4, 1e-4);
  // A mix: each GPU type's figure weighted by its share of the cluster's peak (16 A100s at 312 and
  // 16 V100s at 125 TFLOP/s in fp16, gpt3-1.3b's fallback on the V100s).
  const std::optional<PublishedMfu> mix = published_mfu_ceiling(table, gpt, test::shipped_cluster("a100-v100-2x2"));
  ASSERT_TRUE(mix.has_value());
  EXPECT_EQ(mix->gpu, "A100-SXM4-40GB + V100-SXM2-32GB");
  EXPECT_NEAR(mix->mfu, (0.563 * 312 + 0.525 * 125) / (312 + 125), 1e-9);
  EXPECT_NE(mix->source.find("Korthikanti"), std::string::npos) << mix->source;
  EXPECT_NE(mix->source.find("DeepSpeed"), std::string::npos) << mix->source;
  EXPECT_TRUE(unpublished_gpus(table, gpt, test::shipped_cluster("a100-v100-2x2")).empty());
  // A GPU type with no figure of its own is held to a stand-in's: P100, whose peak no GPU with a
  // figure shares, to the highest for any GPU (A100's), said in the ceiling's names.
  const Cluster hap = test::shipped_cluster("hap-v100-p100");
  const std::optional<PublishedMfu> p100 = published_mfu_ceiling(table, gpt, hap);
  ASSERT_TRUE(p100.has_value());
  EXPECT_NE(p100->source.find("P100-SXM2-16GB (no figure of its own: the highest for any GPU, A100-SXM4-80GB's)"), std::string::npos)
      << p100->source;
  EXPECT_TRUE(unpublished_gpus(table, gpt, hap).empty());
}

TEST(PublishedMfu, AGpuWithNoFigureIsHeldToOneOfTheSamePeakElseToTheHighestOnAnyGpu) {
  const std::vector<PublishedMfu>& table = shipped_published_mfu();
  const ModelSpec gpt = load_model(test::shipped("workloads", "gpt3-1.3b"));
  // H200: H100's die with more memory, the same 16-bit peak: H100's figure.
  const std::optional<PublishedMfu> h200 = published_mfu_ceiling(table, gpt, one_type("H200-SXM-141GB"));
  ASSERT_TRUE(h200.has_value());
  EXPECT_DOUBLE_EQ(h200->mfu, 0.48);
  EXPECT_EQ(h200->gpu, "H200-SXM-141GB (no figure of its own: H100-SXM5-80GB's, the same bf16 peak)");
  // L40S: no NVIDIA GPU with a figure has its peak: the highest 16-bit dense figure on any GPU.
  const std::optional<PublishedMfu> l40s = published_mfu_ceiling(table, gpt, one_type("L40S"));
  ASSERT_TRUE(l40s.has_value());
  double highest = 0;
  for (const PublishedMfu& m : table) {
    if (m.setting == "dense" && m.gemm == "bf16") highest = std::max(highest, m.mfu);
  }
  EXPECT_DOUBLE_EQ(l40s->mfu, highest);
  EXPECT_NE(l40s->gpu.find("L40S (no figure of its own: the highest for any GPU, "), std::string::npos) << l40s->gpu;
  // GB300 has figures of its own (Megatron-Bridge's held-out rows): a dense MXFP8 run is held to
  // its 98.1 %, not to B200's 70.0 % (audit 2026-12-03: a GB300 plan was flagged at 71.6 %).
  const ModelSpec mx = load_model(test::source_dir() / "studies/validation/models/llama3-70b-mxfp8.yaml");
  const std::optional<PublishedMfu> gb300 = published_mfu_ceiling(table, mx, one_type("GB300"));
  ASSERT_TRUE(gb300.has_value());
  EXPECT_EQ(gb300->gpu, "GB300");
  EXPECT_DOUBLE_EQ(gb300->mfu, 0.9812);
  // Nothing published for the setting and format on any GPU (MoE in fp32): none.
  ModelSpec moe = load_model(test::shipped("workloads", "mixtral-8x7b"));
  moe.training.gemm_precision = GemmPrecision::kDtype;
  moe.training.dtype = DType::kFp32;
  EXPECT_FALSE(published_mfu_ceiling(table, moe, one_type("L40S")).has_value());
  EXPECT_EQ(unpublished_gpus(table, moe, one_type("L40S")), std::vector<std::string>{"L40S"});
}

TEST(PublishedMfu, SimulateSaysWhenItsMfuIsAboveAnythingPublished) {
  const auto cluster = std::filesystem::temp_directory_path() / ("hetsim_mfu_cli_" + std::to_string(::getpid()) + ".yaml");
  const auto report = std::filesystem::temp_directory_path() / ("hetsim_mfu_cli_" + std::to_string(::getpid()) + ".json");
  std::ofstream(cluster) << "name: t\nnode_types:\n  - {name: a, count: 2, gpu: A100-SXM4-80GB, gpus_per_node: 8, "
                            "intra_node: {fabric: nvswitch, bandwidth: 300GBps, latency: 1us}, nic: {count: 8, bandwidth: 200Gbps, latency: 2us}}\n"
                            "network: {topology: fat-tree, switch_latency: 1us}\n";
  const test::CliRun r = test::run_hetsim("-q simulate -c " + cluster.string() + " -m gpt3-1.3b -s dp-even --no-upper-bound --report " +
                                              report.string(),
                                          test::Capture::kStdout);
  ASSERT_EQ(r.rc, 0) << r.output;
  const nlohmann::json j = nlohmann::json::parse(slurp(report));
  std::filesystem::remove(cluster);
  std::filesystem::remove(report);
  ASSERT_TRUE(j.contains("mfu_published"));
  EXPECT_DOUBLE_EQ(j["mfu_published"]["highest"].get<double>(), 0.563);
  const bool above = j["mfu"].get<double>() > 0.563;
  EXPECT_EQ(j["mfu_published"]["above"].get<bool>(), above);
  EXPECT_EQ(r.output.find("is above the highest published for A100-SXM4-80GB") != std::string::npos, above) << r.output;
}

TEST(PublishedMfu, AMixAboveItsTypesWeightedFiguresIsSaidAndASettingWithNoFigureIsNotChecked) {
  // GPT-3 1.3B data parallel on A100s and MI250X GCDs: hetsim's MFU (57.8 % on 2026-11-29) is above
  // what each type's best published run, weighted by its peak, allows (49.5 %); for training
  // in fp32 nothing is published on any GPU.
  const test::CliRun mix =
      test::run_hetsim("-q simulate -c a100-mi250x -m gpt3-1.3b -s dp-proportional --no-upper-bound", test::Capture::kStdout);
  ASSERT_EQ(mix.rc, 0) << mix.output;
  const double weighted = (0.563 * 312 + 0.3838 * 191.5) / (312 + 191.5);  // 16 GPUs of each
  const size_t at = mix.output.find("MFU: ");
  ASSERT_NE(at, std::string::npos) << mix.output;
  ASSERT_GT(std::stod(mix.output.substr(at + 5)), 100 * weighted) << mix.output;
  EXPECT_NE(mix.output.find("is above the highest published for A100-SXM4-40GB + MI250X, dense training with 16-bit (bf16 or fp16) GEMMs: " +
                            format_double("%.1f %%", 100 * weighted)),
            std::string::npos)
      << mix.output;
  // Training in fp32: nothing published on any GPU, so not checked, and said.
  const test::CliRun fp32 = test::run_hetsim("-q simulate -c a100-8x8 -m gpt3-1.3b -s dp-even --no-upper-bound --set model.training.dtype=fp32",
                                             test::Capture::kStdout);
  ASSERT_EQ(fp32.rc, 0) << fp32.output;
  EXPECT_NE(fp32.output.find(": not checked against published runs (none shipped for A100-SXM4-40GB, dense training with fp32 GEMMs"),
            std::string::npos)
      << fp32.output;
}

}  // namespace
}  // namespace hetsim
