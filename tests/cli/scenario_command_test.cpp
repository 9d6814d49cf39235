// File: tests/cli/scenario_command_test.cpp
// `hetsim scenario` (left out of --help): one scenario of a study for a program that reads studies
// but not command lines, the Python module's sweep. Its row is the one `hetsim sweep` stores.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "test_support.hpp"

namespace hetsim {
namespace {

using test::temp;

std::string text_of(const std::filesystem::path& p) {
  std::ostringstream s;
  s << std::ifstream(p).rdbuf();
  return s.str();
}

TEST(ScenarioCommand, RunsAScenarioIntoItsRowAndChecksWithoutRunning) {
  const auto row = temp("row.json"), report = temp("report.json");
  const std::string args = "simulate -c a100-v100-2x2 -m bert-base --strategy dp-even";
  ASSERT_EQ(test::run_hetsim("scenario --row " + row.string() + " -- " + args, test::Capture::kStdout).rc, 0);
  const nlohmann::json r = nlohmann::json::parse(text_of(row));
  EXPECT_EQ(r["status"], "ok");
  // The row's report is the one simulate --report writes, bit for bit.
  ASSERT_EQ(test::run_hetsim(args + " --report " + report.string(), test::Capture::kStdout).rc, 0);
  EXPECT_EQ(nlohmann::json::parse(r["report"].get<std::string>()), nlohmann::json::parse(text_of(report)));
  // --check runs nothing: its row file holds nothing for a good command line, the refusal's words for a bad one.
  std::filesystem::remove(row);
  EXPECT_EQ(test::run_hetsim("scenario --check --row " + row.string() + " -- " + args, test::Capture::kStdout).rc, 0);
  EXPECT_FALSE(std::filesystem::exists(row));
  const test::CliRun bad = test::run_hetsim("scenario --check --row " + row.string() + " -- simulate --no-such-flag", test::Capture::kStderr);
  EXPECT_EQ(bad.rc, 2);
  EXPECT_EQ(text_of(row), "The following argument was not expected: --no-such-flag\n");
  // A row that cannot be written whole (a full disk): exit 2, said on stderr (the run had silenced it).
  const test::CliRun full = test::run_hetsim("scenario --row /dev/full -- " + args, test::Capture::kStderr);
  EXPECT_EQ(full.rc, 2);
  EXPECT_NE(full.output.find("/dev/full: error: --row: could not be written whole"), std::string::npos) << full.output;
  // Without a row file, or without a command line: exit 2. Not in --help.
  EXPECT_EQ(test::run_hetsim("scenario -- " + args, test::Capture::kStderr).rc, 2);
  EXPECT_EQ(test::run_hetsim("scenario --row " + row.string(), test::Capture::kStderr).rc, 2);
  EXPECT_EQ(test::run_hetsim("--help", test::Capture::kStdout).output.find("\n  scenario"), std::string::npos);
  for (const auto& p : {row, report}) std::filesystem::remove(p);
}

}  // namespace
}  // namespace hetsim
