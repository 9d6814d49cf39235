// File: tests/cli/compare_test.cpp
// `hetsim compare`: two scenarios side by side, and what changed on the critical path.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "test_support.hpp"

namespace hetsim {
namespace {

std::filesystem::path temp(const std::string& name) {
  return std::filesystem::temp_directory_path() / ("hetsim_compare_" + std::to_string(::getpid()) + "_" + name);
}

TEST(Compare, ASlowerNicShowsUpInTheGradientSyncOnTheCriticalPath) {
  const auto report = temp("cmp.json"), single = temp("single.json");
  const std::string a = "simulate -c a100-v100-2x2 -m gpt3-1.3b --strategy dp-proportional";
  const test::CliRun r = test::run_hetsim("compare --report " + report.string() + " " + a +
                                              " --vs --set 'cluster.node_types[*].nic.bandwidth=10Gbps'",
                                          test::Capture::kStdout);
  ASSERT_EQ(r.rc, 0) << r.output;
  EXPECT_NE(r.output.find("B: hetsim " + a + " --set 'cluster.node_types[*].nic.bandwidth=10Gbps'"), std::string::npos) << r.output;
  const nlohmann::json j = nlohmann::json::parse(std::ifstream(report));
  // A is exactly what simulate alone reports.
  ASSERT_EQ(test::run_hetsim(a + " --report " + single.string(), test::Capture::kStdout).rc, 0);
  const nlohmann::json alone = nlohmann::json::parse(std::ifstream(single));
  EXPECT_EQ(j["a"]["report"]["iteration_time_s"], alone["iteration_time_s"]);
  const auto& fig = j["differences"]["figures"]["iteration_time_s"];
  EXPECT_GT(fig[1].get<double>(), fig[0].get<double>());
  // The critical path covers the iteration, and what grew on it is the gradient all-reduce, not compute.
  for (const char* side : {"a", "b"}) {
    double sum = 0;
    for (const auto& k : j[side]["report"]["critical_path"]) sum += k["seconds"].get<double>();
    EXPECT_NEAR(sum, j[side]["report"]["iteration_time_s"].get<double>(), 1e-9) << side;
  }
  const auto& first = j["differences"]["critical_path"][0];
  EXPECT_EQ(first["kind"], "allreduce.layerN");
  EXPECT_GT(first["b_s"].get<double>(), 2 * first["a_s"].get<double>());
  // Forward compute on the path did not grow (it may shrink: with the all-reduces longer, the path
  // can take them instead of a step's forwards).
  for (const auto& k : j["differences"]["critical_path"]) {
    if (k["kind"].get<std::string>().find(".fwd") != std::string::npos) {
      EXPECT_LE(k["b_s"].get<double>(), k["a_s"].get<double>() * (1 + 1e-12)) << k["kind"];
    }
  }
  std::filesystem::remove(report);
  std::filesystem::remove(single);
}

TEST(Compare, BadCommandLinesAreInputErrors) {
  for (const std::string args : {"compare simulate -c a100-v100-2x2", "compare -c a100-v100-2x2 --vs plan",
                                  "compare simulate --vs --set cluster.node_types[0].nic.bandwith=1Gbps"}) {
    const test::CliRun r = test::run_hetsim(args, test::Capture::kStderr);
    EXPECT_EQ(r.rc, 2) << args << "\n" << r.output;
  }
}

}  // namespace
}  // namespace hetsim
