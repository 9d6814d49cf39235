// File: tests/studies/published_mfu_test.cpp
// The highest published MFU per GPU and kind of training (studies/validation/mfu/published-mfu.yaml):
// the shipped table loads, a run finds the figure of its GPUs, setting and GEMM format or none,
// and `simulate` says when its MFU is above it.
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
  // Nothing published for bf16 training on H100 in the table: no figure, rather than another's.
  EXPECT_FALSE(published_mfu_ceiling(table, gpt, one_type("H100-SXM5-80GB")).has_value());
  // The same model with FP8 GEMMs on H100: the FP8 dense figure.
  ModelSpec fp8 = gpt;
  fp8.training.gemm_precision = GemmPrecision::kFp8Current;
  EXPECT_EQ(mfu_gemm(fp8), "fp8");
  const std::optional<PublishedMfu> h100 = published_mfu_ceiling(table, fp8, one_type("H100-SXM5-80GB"));
  ASSERT_TRUE(h100.has_value());
  EXPECT_NEAR(h100->mfu, 784 / 989.4, 1e-4);
  // A mixed cluster needs a figure for every GPU type (V100 has none).
  EXPECT_FALSE(published_mfu_ceiling(table, gpt, test::shipped_cluster("a100-v100-2x2")).has_value());
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

}  // namespace
}  // namespace hetsim
