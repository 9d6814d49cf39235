// File: tests/studies/results_table_test.cpp
// What a sweep's table says beside its rows: where scenarios' GPU types ran under different
// calibration (a profile on some, the raw model on others), the rows compare unlike predictions,
// and `hetsim report` says so naming the rows, the sweep itself counting the scenarios.
#include "studies/sweep/results_table.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "base/temp_dir.hpp"
#include "studies/sweep/results_db.hpp"
#include "test_support.hpp"

namespace hetsim {
namespace {

namespace fs = std::filesystem;

// An ok row with these axes and this report.
void put_row(ResultsDb& db, int position, const nlohmann::json& axes, const nlohmann::json& report) {
  ScenarioRow row;
  row.scenario = "key-" + std::to_string(position);
  row.study = std::string("s");
  row.position = position;
  row.axes = axes.dump();
  row.status = std::string("ok");
  row.samples_per_s = 100.0 - position;  // --sort samples_per_s turns the rows round
  row.report = report.dump();
  db.put(row);
}

// An ok row of one GPU type, run under `profile` ("none": the raw model).
void put(ResultsDb& db, int position, const std::string& gpu, const std::string& profile) {
  put_row(db, position, {{"gpu", gpu}}, {{"calibration", {{gpu, profile}}}});
}

TEST(ResultsTable, ScenariosOfCalibratedAndRawGpuTypesAreSaidToCompareUnlikePredictions) {
  const TempDir f("results-table-test");
  const fs::path mixed = f.path() / "mixed.db", alike = f.path() / "alike.db";
  {
    ResultsDb db(mixed);
    put(db, 0, "A100-SXM4-80GB", "megatron-lm-2021-a100");
    put(db, 1, "A100-SXM4-80GB", "megatron-lm-2021-a100");
    put(db, 2, "MI250X", "none");
    put(db, 3, "A100-SXM4-80GB", "megatron-lm-2021-a100");
    ResultsDb both_raw(alike);
    put(both_raw, 0, "A100-SXM4-80GB", "none");
    put(both_raw, 1, "MI250X", "none");
  }
  const ResultsTable t = results_table(mixed, {});
  ASSERT_EQ(t.notes.size(), 1u);
  EXPECT_NE(t.notes[0].find("calibration differs across these scenarios: A100-SXM4-80GB under megatron-lm-2021-a100 (rows 1-2, 4); "
                            "MI250X on the raw model (row 3)"),
            std::string::npos)
      << t.notes[0];
  // Sorted, the rows named are the printed table's.
  const ResultsTable sorted = results_table(mixed, {"samples_per_s", {}, false});
  ASSERT_EQ(sorted.notes.size(), 1u);
  EXPECT_NE(sorted.notes[0].find("(rows 1, 3-4); MI250X on the raw model (row 2)"), std::string::npos) << sorted.notes[0];
  // A GPU axis varied fastest alternates the rows: past eight ranges the list is cut, with the count.
  const fs::path alternating = f.path() / "alternating.db";
  {
    ResultsDb db(alternating);
    for (int i = 0; i < 40; ++i) put(db, i, i % 2 == 0 ? "A100-SXM4-80GB" : "MI250X", i % 2 == 0 ? "megatron-lm-2021-a100" : "none");
  }
  const ResultsTable many = results_table(alternating, {});
  ASSERT_EQ(many.notes.size(), 1u);
  EXPECT_NE(many.notes[0].find("A100-SXM4-80GB under megatron-lm-2021-a100 (rows 1, 3, 5, 7, 9, 11, 13, 15, ... (20 rows)); "
                               "MI250X on the raw model (rows 2, 4, 6, 8, 10, 12, 14, 16, ... (20 rows))"),
            std::string::npos)
      << many.notes[0];
  // All on the raw model (--calibration none in every scenario): like with like, nothing to say.
  EXPECT_TRUE(results_table(alike, {}).notes.empty());
  const test::CliRun r = test::run_hetsim("report " + mixed.string(), test::Capture::kStdout);
  EXPECT_EQ(r.rc, 0);
  EXPECT_NE(r.output.find("note: calibration differs across these scenarios"), std::string::npos) << r.output;
  // A database edited to carry terminal escapes in a GPU name: the note is printed without them;
  // values that are not strings are left out.
  const fs::path hostile = f.path() / "hostile.db";
  {
    ResultsDb db(hostile);
    put(db, 0, "A100\x1b]0;owned\x07\x1b[31m", "megatron-lm-2021-a100");
    put(db, 1, "MI250X", "none");
    put_row(db, 2, nlohmann::json::object(), {{"calibration", {{"H100", 7}}}});
  }
  const test::CliRun h = test::run_hetsim("report " + hostile.string(), test::Capture::kStdout);
  EXPECT_EQ(h.rc, 0) << test::run_hetsim("report " + hostile.string(), test::Capture::kStderr).output;
  EXPECT_NE(h.output.find("note: calibration differs across these scenarios"), std::string::npos) << h.output;
  EXPECT_EQ(h.output.find('\x1b'), std::string::npos) << h.output;
  EXPECT_EQ(h.output.find("H100"), std::string::npos) << h.output;
}

TEST(ResultsTable, RowsAboveThePublishedMfuAreNamed) {
  // Audit 2026-12-03: plan and simulate said it beside the figure, sweep tables did not.
  const TempDir f("results-table-mfu");
  const fs::path file = f.path() / "mfu.db";
  {
    ResultsDb db(file);
    for (int i = 0; i < 4; ++i) {
      nlohmann::json report{{"mfu_published", {{"highest", 0.495}, {"above", i >= 2}}}};
      if (i == 0) report["mfu_published"] = nullptr;  // nothing published for its GPUs: not said
      put_row(db, i, {{"nic", std::to_string(i)}}, report);
    }
  }
  const ResultsTable t = results_table(file, {});
  ASSERT_EQ(t.notes.size(), 1u);
  EXPECT_EQ(t.notes[0].rfind("MFU above the highest published for its GPUs and setting in rows 3-4 (", 0), 0u) << t.notes[0];
}

TEST(ResultsTable, ASweepThatSwapsTheGpuTypeSaysWhereCalibrationDiffers) {
  // The default cluster's V100 nodes (dle-pytorch-bert-2022 in force) swapped for MI250X nodes (no
  // profile); then the same with --calibration none in every scenario: like with like.
  const TempDir f("results-table-test");
  const std::string axis =
      "vary:\n  - set: cluster.node_types[1]\n    values:\n"
      "      v100: {name: dgx1-v100, count: 2, gpu: V100-SXM2-32GB, gpus_per_node: 8, intra_node: {fabric: nvlink-mesh, "
      "bandwidth: 150GBps, latency: 1us, links: 6}, nic: {count: 4, bandwidth: 100Gbps, latency: 2us}}\n"
      "      mi250x: {name: mi250x-node, count: 2, gpu: MI250X, gpus_per_node: 8, intra_node: {fabric: xgmi-mesh, "
      "bandwidth: 100GBps, latency: 1.5us}, nic: {count: 4, bandwidth: 200Gbps, latency: 2us}}\n";
  std::ofstream(f.path() / "swap.yaml") << "name: swap\ncluster: a100-v100-2x2\nmodel: bert-base\nrun: simulate\nstrategy: dp-even\n" << axis;
  std::ofstream(f.path() / "raw.yaml") << "name: raw\ncluster: a100-v100-2x2\nmodel: bert-base\nrun: simulate\nstrategy: dp-even\n"
                                    << axis << "  - flags: [[--calibration=none]]\n";
  const test::CliRun r = test::run_hetsim("sweep " + (f.path() / "swap.yaml").string(), test::Capture::kStdout);
  ASSERT_EQ(r.rc, 0) << r.output;
  EXPECT_NE(r.output.find("note: calibration differs across these scenarios: A100-SXM4-40GB under megatron-lm-2021-a100 (2 scenarios), "
                          "V100-SXM2-32GB under dle-pytorch-bert-2022 (1 scenario); MI250X on the raw model (1 scenario)"),
            std::string::npos)
      << r.output;
  const test::CliRun table = test::run_hetsim("report " + (f.path() / "swap.db").string(), test::Capture::kStdout);
  EXPECT_NE(table.output.find("A100-SXM4-40GB under megatron-lm-2021-a100 (rows 1-2), V100-SXM2-32GB under dle-pytorch-bert-2022 (row 1); "
                              "MI250X on the raw model (row 2)"),
            std::string::npos)
      << table.output;
  const test::CliRun raw = test::run_hetsim("sweep " + (f.path() / "raw.yaml").string(), test::Capture::kStdout);
  ASSERT_EQ(raw.rc, 0) << raw.output;
  EXPECT_EQ(raw.output.find("calibration differs"), std::string::npos) << raw.output;
  // Each scenario's report says which profile moved each GPU type's times.
  const ResultsDb db(f.path() / "swap.db", ResultsDb::Mode::kRead);
  const std::vector<ScenarioRow> rows = db.rows();
  ASSERT_EQ(rows.size(), 2u);
  for (const ScenarioRow& row : rows) {
    const nlohmann::json j = nlohmann::json::parse(row.report);
    ASSERT_TRUE(j.contains("calibration")) << row.report.substr(0, 200);
    EXPECT_EQ(j["calibration"]["A100-SXM4-40GB"], "megatron-lm-2021-a100");
  }
}

}  // namespace
}  // namespace hetsim
