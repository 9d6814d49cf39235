// File: tests/studies/sizing_test.cpp
// Sizing: mixes within the budget, costs, Pareto fronts and pruning, and `hetsim size` end to end
// (a monotone front within budget whose every plan re-simulates to its time; resuming from the
// database; bad sizing files rejected with their location).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "base/input_error.hpp"
#include "kernels_profile/device.hpp"
#include "studies/sizing/costs.hpp"
#include "studies/sizing/mixes.hpp"
#include "studies/sizing/pareto.hpp"
#include "studies/sizing/sizing.hpp"
#include "studies/sizing/sizing_file.hpp"
#include "test_support.hpp"

namespace hetsim {
namespace {

using test::temp;  // the program's private folder

std::filesystem::path fixture() { return test::source_dir() / "tests/fixtures/sizing/small.yaml"; }

const char* kNode = "{gpu: A100-SXM4-40GB, gpus_per_node: 2, intra_node: {fabric: nvswitch, bandwidth: 300GBps, latency: 1us}, "
                    "nic: {count: 2, bandwidth: 200Gbps, latency: 2us}}";

std::filesystem::path write_sizing(const std::string& name, const std::string& offers, const std::string& rest) {
  const auto p = temp(name + ".yaml");
  std::ofstream(p) << "model: bert-base\ntrain_tokens: 1T\n" << rest << "offers:\n" << offers;
  return p;
}

TEST(Sizing, MixesAreEveryCountWithinTheBudgetAndNoMore) {
  const Sizing s = load_sizing(fixture());
  ASSERT_EQ(s.offers.size(), 2u);
  EXPECT_EQ(s.offers[0].max_count, 3);  // 120k / 40k; power 8 kW / 1.5 kW would allow 5
  EXPECT_EQ(s.offers[1].max_count, 4);  // the file's max_count (the budget allows 8)
  EXPECT_EQ(s.offers[0].gpus_per_node, 2);
  EXPECT_EQ(s.offers[1].gpu.name, "V100-SXM2-32GB");
  const std::vector<Mix> mixes = enumerate_mixes(s, 1000);
  size_t expected = 0;
  for (long a = 0; a <= 3; ++a) {
    for (long v = 0; v <= 4; ++v) {
      const bool fits = a * 40000 + v * 15000 <= 120000 && a * 1500 + v * 1000 <= 8000 && a + v > 0;
      expected += fits;
    }
  }
  EXPECT_EQ(mixes.size(), expected);
  for (const Mix& m : mixes) {
    EXPECT_LE(m.capex_usd, 120000);
    EXPECT_LE(m.power_w, 8000);
    EXPECT_GT(m.nodes, 0);
    EXPECT_EQ(m.gpus, 2 * m.nodes);
  }
  EXPECT_THROW((void)enumerate_mixes(s, 3), InputError);
}

TEST(Sizing, OffersUnderDifferentCalibrationAreSaidToBe) {
  // The fixture's A100 40GB and V100 32GB run shipped profiles of different eras (Megatron-LM of
  // 2022, DeepLearningExamples' BERT of 2022-03): a front across them compares two stacks, and the
  // report and summary say which is in force on each.
  Sizing s = load_sizing(fixture());
  ASSERT_NE(s.offers[0].gpu.calibration, s.offers[1].gpu.calibration);
  const std::string note = calibration_note(s, false);
  EXPECT_NE(note.find("calibration differs"), std::string::npos) << note;
  EXPECT_NE(note.find("different software eras"), std::string::npos) << note;
  for (const Offer& of : s.offers) EXPECT_NE(note.find(of.gpu.name + ": " + of.gpu.calibration), std::string::npos) << note;
  s.offers[1].gpu.calibration.clear();  // one type raw
  EXPECT_NE(calibration_note(s, false).find(s.offers[1].gpu.name + ": none (the raw model)"), std::string::npos);
  EXPECT_NE(calibration_note(s, false).find("a raw type against a calibrated one"), std::string::npos);
  s.offers[0].gpu.calibration.clear();  // both raw: like with like
  EXPECT_EQ(calibration_note(s, false), "");
  // H100 and B200 under their own profiles of one era (Megatron-Core 2026): like with like, for a
  // mixture of experts and (since H100's profile holds the host time before each pass, which every
  // run pays) for a dense model too.
  s.offers[0].gpu = load_shipped_device("H100-SXM5-80GB", Diagnostic{});
  s.offers[1].gpu = load_shipped_device("B200", Diagnostic{});
  ASSERT_FALSE(s.offers[0].gpu.calibration.empty());
  ASSERT_FALSE(s.offers[1].gpu.calibration.empty());
  EXPECT_EQ(calibration_note(s, true), "");
  EXPECT_EQ(calibration_note(s, false), "");
  // Beside a GPU type no profile covers, a dense model says which stands on the raw model.
  s.offers[1].gpu = load_shipped_device("MI250X", Diagnostic{});
  EXPECT_NE(calibration_note(s, false).find("MI250X: none (the raw model)"), std::string::npos) << calibration_note(s, false);
  EXPECT_NE(calibration_note(s, false).find("H100-SXM5-80GB: megatron-core-2026"), std::string::npos) << calibration_note(s, false);
  s = load_sizing(fixture());
  s.flags = {"--calibration", "none"};  // the sizing's plans all run the raw model
  EXPECT_EQ(calibration_note(s, false), "");
  s.flags = {"--calibration=megatron-lm-2021-a100"};  // one profile, listing the A100s only
  EXPECT_NE(calibration_note(s, false).find("the flags' profile megatron-lm-2021-a100 on A100-SXM4-40GB; none (the raw model) on V100-SXM2-32GB"),
            std::string::npos)
      << calibration_note(s, false);
  s.flags.clear();
  s.offers[1].gpu = s.offers[0].gpu;  // one GPU type: nothing to say
  EXPECT_EQ(calibration_note(s, false), "");
}

TEST(Sizing, CountStepTakesWholeRacksOnly) {
  // Offer 0 comes in racks of 3 nodes from 2 up (so 3 and 6 within its budget of 7), offer 1 by the node.
  Sizing s = load_sizing(fixture());
  s.offers[0].count_step = 3;
  s.offers[0].min_count = 2;
  s.offers[0].max_count = 7;
  s.offers[0].price_usd = 1;
  s.budget_power_w.reset();
  s.budget_capex_usd.reset();
  const std::vector<Mix> mixes = enumerate_mixes(s, 1000);
  std::set<long> counts;
  for (const Mix& m : mixes) counts.insert(m.counts[0]);
  EXPECT_EQ(counts, (std::set<long>{3, 6}));
  EXPECT_EQ(mixes.size(), 2u * 5u);  // offer 1: 0 to its max_count 4
}

TEST(Sizing, AMixOverTheClusterGpuCapIsRefusedNamingIt) {
  // Issue 35: a cluster is capped at 131 072 GPUs; a budget that allows a larger mix says so
  // instead of handing it to a run that would end for want of memory.
  Sizing s = load_sizing(fixture());
  s.budget_capex_usd.reset();
  s.budget_power_w.reset();
  s.offers.resize(1);
  s.offers[0].min_count = s.offers[0].max_count = 70000;  // 2 GPUs each: 140 000
  try {
    (void)enumerate_mixes(s, 1000);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("140000 GPUs; hetsim simulates at most 131072: lower the offers' max_count"), std::string::npos)
        << e.what();
  }
}

TEST(Sizing, CostsAmortiseCapexAndChargeEnergyWithPue) {
  const Sizing s = load_sizing(fixture());
  const Mix m = make_mix(s, {1, 2});  // 40k + 30k USD, 1.5 + 2 kW
  const MixCosts c = costs_of(s, m, 1000.0, 512.0);  // 1e8 samples at 1000/s: 1e5 s
  EXPECT_DOUBLE_EQ(c.time_to_train_s, 1e5);
  EXPECT_DOUBLE_EQ(c.cost_usd, 70000);
  EXPECT_NEAR(c.energy_kwh, 3500 * 1e5 / 3.6e6, 1e-9);
  EXPECT_NEAR(c.energy_usd, c.energy_kwh * 1.2 * 0.1, 1e-9);
  const double amortised = 70000 * 1e5 / (4 * 365.25 * 86400);
  EXPECT_NEAR(c.cost_per_million_tokens_usd, (amortised + c.energy_usd) / (1e8 * 512 / 1e6), 1e-12);
}

TEST(Sizing, FrontIsCheapestFirstWithTimeStrictlyFalling) {
  const std::vector<CostTime> pts{{10, 5}, {20, 4}, {20, 3}, {15, 6}, {30, 3}, {40, 1}, {5, 9}};
  EXPECT_EQ(pareto_front(pts), (std::vector<size_t>{6, 0, 2, 5}));
  // With no tolerance only dominated points go; a tolerance keeps those near the front.
  const std::vector<bool> exact(pts.size(), false);
  EXPECT_EQ(not_surely_dominated(pts, exact, 0.0), (std::vector<size_t>{0, 2, 5, 6}));
  // (20, 4) falls to (20, 3) even when that is made 25 % slower; (15, 6) falls to (10, 5) made 10 %
  // slower, not 25 %; (30, 3) stays since (20, 3) made slower is slower than it.
  EXPECT_EQ(not_surely_dominated(pts, exact, 0.25), (std::vector<size_t>{0, 2, 3, 4, 5, 6}));
  EXPECT_EQ(not_surely_dominated(pts, exact, 0.1), (std::vector<size_t>{0, 2, 4, 5, 6}));
  // A cost that depends on the time (rent, energy) is made worse too.
  EXPECT_EQ(not_surely_dominated({{10, 5}, {10.5, 6}}, {true, true}, 0.1), (std::vector<size_t>{0, 1}));
  EXPECT_EQ(not_surely_dominated({{10, 5}, {10.5, 6}}, {false, false}, 0.1), std::vector<size_t>{0});
  const std::vector<CostTime> twins{{1, 1}, {1, 1}};
  EXPECT_EQ(not_surely_dominated(twins, {false, false}, 0.0), std::vector<size_t>{0});
}

TEST(Sizing, PlansSpreadOverTheEstimatedTimesCheapestFirstInEachBand) {
  // Times 1 ... 1000 on a log scale; three bands: [1, 10), [10, 100), [100, 1000]; the fastest band
  // gives its fastest mix first (the budget's end of the front), the others their cheapest.
  const std::vector<CostTime> est{{5, 1}, {4, 2}, {9, 30}, {3, 40}, {8, 500}, {7, 1000}, {1, 900}};
  const std::vector<size_t> all{0, 1, 2, 3, 4, 5, 6};
  EXPECT_EQ(spread_over_times(all, est, 3), (std::vector<size_t>{0, 3, 6}));
  EXPECT_EQ(spread_over_times(all, est, 5), (std::vector<size_t>{0, 3, 6, 1, 2}));
  EXPECT_EQ(spread_over_times({2, 3}, est, 5), (std::vector<size_t>{2, 3}));
  // Equal costs (rents under linear scaling): still spread from fastest to slowest.
  const std::vector<CostTime> flat{{1, 1}, {1, 2}, {1, 4}, {1, 8}, {1, 16}};
  EXPECT_EQ(spread_over_times({0, 1, 2, 3, 4}, flat, 2), (std::vector<size_t>{0, 2}));  // bands [1, 4), [4, 16]
}

TEST(Sizing, SizeGivesAMonotoneFrontWithinBudgetWhosePlansResimulateToTheirTimes) {
  const auto db = temp("e2e.db"), report = temp("e2e.json"), emit = temp("emit");
  const test::CliRun run = test::run_hetsim("size " + fixture().string() + " --jobs 2 --max-plans 4 --db " + db.string() +
                                                " --report " + report.string() + " --emit " + emit.string(),
                                            test::Capture::kStdout);
  ASSERT_EQ(run.rc, 0) << run.output;
  const nlohmann::json r = nlohmann::json::parse(std::ifstream(report));
  const nlohmann::json& front = r["pareto"];
  ASSERT_GE(front.size(), 3u) << run.output;
  // Every front mix states its error bar on published runs, or that none covers its GPU types: one
  // line each, from the "error on published runs:" line on.
  const size_t bars = run.output.find("error on published runs: ");
  ASSERT_NE(bars, std::string::npos) << run.output;
  std::istringstream lines(run.output.substr(bars));
  size_t said = 0;
  std::string line;
  for (size_t k = 0; k < front.size() && std::getline(lines, line); ++k) {
    if (line.find("90th percentile of |error|") != std::string::npos || line.find("no calibration for these GPU types") != std::string::npos ||
        line.find("no published run mixes these GPU types; each alone: ") != std::string::npos) {
      ++said;
    }
  }
  EXPECT_EQ(said, front.size()) << run.output;
  EXPECT_EQ(r["mixes_planned"], 6);  // 2 references + --max-plans 4
  for (size_t k = 0; k < front.size(); ++k) {
    const nlohmann::json& p = front[k];
    EXPECT_LE(p["capex_usd"].get<double>(), 120000);
    EXPECT_LE(p["power_kw"].get<double>(), 8);
    for (const char* key : {"cost_usd", "samples_per_s", "time_to_train_s", "energy_kwh", "cost_per_million_tokens_usd", "efficiency"}) {
      EXPECT_TRUE(p[key].is_number() && std::isfinite(p[key].get<double>()) && p[key].get<double>() > 0) << key;
    }
    if (k > 0) {  // dearer is faster
      EXPECT_GT(p["cost_usd"].get<double>(), front[k - 1]["cost_usd"].get<double>());
      EXPECT_LT(p["time_to_train_s"].get<double>(), front[k - 1]["time_to_train_s"].get<double>());
    }
    // The point's cluster and plan, simulated again, take the reported time.
    const std::string stem = (emit / ("front-" + std::to_string(k + 1))).string();
    EXPECT_EQ(test::source_dir().empty(), false);
    const auto again = temp("again.json");
    const test::CliRun sim = test::run_hetsim("simulate -c " + stem + ".cluster.yaml -m bert-base --plan " + stem +
                                                  ".plan.yaml --report " + again.string(),
                                              test::Capture::kStderr);
    ASSERT_EQ(sim.rc, 0) << sim.output;
    const nlohmann::json s = nlohmann::json::parse(std::ifstream(again));
    EXPECT_DOUBLE_EQ(s["iteration_time_s"].get<double>(), p["iteration_time_s"].get<double>()) << p["label"];
    EXPECT_DOUBLE_EQ(s["samples_per_s"].get<double>(), p["samples_per_s"].get<double>());
    EXPECT_EQ(std::ifstream(stem + ".plan.yaml").good(), true);
  }
  // Every evaluated point no front point dominates is on the front.
  for (const nlohmann::json& e : r["evaluated"]) {
    if (e["status"] != "ok") continue;
    bool dominated = false;
    for (const nlohmann::json& p : front) {
      dominated = dominated || (p["cost_usd"] <= e["cost_usd"] && p["time_to_train_s"] <= e["time_to_train_s"]);
    }
    EXPECT_TRUE(dominated) << e["label"];
  }
  // A second run plans nothing and reports the same front.
  const auto report2 = temp("e2e2.json");
  const test::CliRun rerun = test::run_hetsim("size " + fixture().string() + " --jobs 2 --max-plans 4 --db " + db.string() +
                                                  " --report " + report2.string(),
                                              test::Capture::kStderr);
  ASSERT_EQ(rerun.rc, 0) << rerun.output;
  EXPECT_EQ(rerun.output.find("planning"), std::string::npos) << rerun.output;
  const nlohmann::json r2 = nlohmann::json::parse(std::ifstream(report2));
  EXPECT_EQ(r2["pareto"], r["pareto"]);
  std::filesystem::remove_all(emit);
  for (const auto& f : {db, report, report2}) std::filesystem::remove(f);
}

TEST(Sizing, BadSizingFilesNameFileLineAndField) {
  const std::string offer = std::string("  - name: n\n    node: ") + kNode + "\n    price: 40000USD\n    power: 1.5kW\n";
  const std::string buy = "energy: {price: 0.1USD/kWh, pue: 1.2}\namortization: 4y\n";
  struct Case {
    std::string name, offers, rest, expect;
  };
  const std::vector<Case> cases{
      {"nosource", offer, "budget: {capex: 1MUSD}\n" + buy, "offers[0].source: missing"},
      {"unbounded", offer + "    source: s\n", buy, "nothing bounds how many \"n\" nodes"},
      {"both", offer + "    rent: 30USD/h\n    source: s\n", "budget: {capex: 1MUSD}\n" + buy, "a price (to buy"},
      {"noenergy", offer + "    source: s\n", "budget: {capex: 1MUSD}\namortization: 4y\n", "energy: offers to buy need energy"},
      {"badnic", std::string("  - name: n\n    node: ") + "{gpu: A100-SXM4-40GB, gpus_per_node: 2, intra_node: {fabric: nvswitch, "
                 "bandwidth: 300GBps, latency: 1us}, nic: {count: 2, bandwith: 200Gbps, latency: 2us}}\n    price: 1USD\n    power: 1kW\n"
                 "    source: s\n", "budget: {capex: 1MUSD}\n" + buy, "offers[0].node.nic"},
      {"unit", offer + "    source: s\n", "budget: {capex: 1000000}\n" + buy, "budget.capex: \"1000000\" has no unit"},
      {"objective", offer + "    source: s\n", "objective: [time_to_train, costs]\nbudget: {capex: 1MUSD}\n" + buy, "did you mean"},
      // Flags that every mix's plan would have failed on (each an error row, exit 0, no reason shown).
      {"flagreport", offer + "    source: s\n", "budget: {capex: 1MUSD}\n" + buy + "flags: [--report=/tmp/x.json]\n",
       "flags: a scenario's report goes to the results database"},
      {"flagset", offer + "    source: s\n", "budget: {capex: 1MUSD}\n" + buy + "flags: [--set=model.training.global_batch=abc]\n",
       "flags: \"abc\" is not a whole number"},
      {"flagcluster", offer + "    source: s\n", "budget: {capex: 1MUSD}\n" + buy + "flags: [--cluster, a100-8x8]\n",
       "flags: the sizing gives every plan its model and each mix's cluster; leave --cluster out"},
      {"flagshort", offer + "    source: s\n", "budget: {capex: 1MUSD}\n" + buy + "flags: [-ca100-8x8]\n",
       "flags: the sizing gives every plan its model and each mix's cluster; leave -c out"},
      {"flagnul", offer + "    source: s\n", "budget: {capex: 1MUSD}\n" + buy + "flags: [--calibration, \"none\\0junk\"]\n",
       "flags: entry 2 holds a control character"},
  };
  for (const Case& c : cases) {
    const auto path = write_sizing(c.name, c.offers, c.rest);
    const test::CliRun r = test::run_hetsim("size " + path.string() + " --db " + temp(c.name + ".db").string(), test::Capture::kStderr);
    EXPECT_EQ(r.rc, 2) << c.name << ": " << r.output;
    EXPECT_NE(r.output.find(path.string() + ":"), std::string::npos) << c.name << ": " << r.output;
    EXPECT_NE(r.output.find(c.expect), std::string::npos) << c.name << ": " << r.output;
    std::filesystem::remove(path);
    std::filesystem::remove(temp(c.name + ".db"));
  }
}

}  // namespace
}  // namespace hetsim
