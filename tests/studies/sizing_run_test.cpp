// File: tests/studies/sizing_run_test.cpp
// The sizing algorithm with planning passed in (studies/sizing/sizing.hpp): a planner whose rates
// are known shows which mixes run_sizing plans (the references first, then mixes near the
// estimated front, at most max_plans), and that its front and report come from the planned rates.
#include "studies/sizing/sizing.hpp"

#include <gtest/gtest.h>

#include "test_support.hpp"

namespace hetsim {
namespace {

TEST(SizingRun, PlansTheReferencesThenMixesNearTheFrontAndDrawsTheFrontFromThePlannedRates) {
  const Sizing s = load_sizing(test::source_dir() / "tests/fixtures/sizing/small.yaml");
  const ModelSpec model = load_model(test::shipped("workloads", s.model));
  const std::vector<Mix> mixes = enumerate_mixes(s, 100000);
  ASSERT_GT(mixes.size(), 3u);
  // A planner whose rate is 10 samples/s per GPU, and which remembers what it was asked.
  std::vector<std::pair<std::string, size_t>> calls;
  const PlanMixes plan = [&](const std::vector<Mix>& ms, const std::string& what) {
    calls.emplace_back(what, ms.size());
    std::vector<PlannedMix> out;
    for (const Mix& m : ms) {
      PlannedMix p;
      p.status = "ok";
      p.samples_per_s = 10.0 * static_cast<double>(m.gpus);
      p.iteration_time_s = 1;
      p.report = {{"strategy", "test"}, {"plan", "kind: test\n"}};
      out.push_back(p);
    }
    return out;
  };
  SizingOptions o;
  o.max_plans = 2;
  std::string said;
  const SizingRun run = run_sizing(s, model, mixes, o, plan, [&](const std::string& line) { said += line; });
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].first, "reference cluster(s)");
  EXPECT_EQ(calls[0].second, s.offers.size());  // each offer alone
  EXPECT_EQ(calls[1].first, "mix(es) near the estimated front");
  EXPECT_LE(calls[1].second, 2u);  // --max-plans
  EXPECT_NE(said.find("planning " + std::to_string(calls[1].second) + " of them (--max-plans 2)"), std::string::npos) << said;
  EXPECT_EQ(run.references, s.offers.size());
  EXPECT_EQ(run.points.size(), calls[0].second + calls[1].second);
  EXPECT_EQ(run.mixes, mixes.size());
  // The front: every point on it planned and feasible, and none of them dominated by another
  // planned mix (cheaper and no slower, or faster and no dearer).
  ASSERT_FALSE(run.front.empty());
  for (size_t i : run.front) {
    const SizingPoint& p = run.points[i];
    EXPECT_EQ(p.row.status, "ok");
    EXPECT_DOUBLE_EQ(p.costs.time_to_train_s, s.train_samples / p.row.samples_per_s);
    for (size_t j : run.feasible) {
      const SizingPoint& q = run.points[j];
      const double cp = cost_objective_value(s, p.costs), cq = cost_objective_value(s, q.costs);
      EXPECT_FALSE(cq <= cp && q.costs.time_to_train_s <= p.costs.time_to_train_s &&
                   (cq < cp || q.costs.time_to_train_s < p.costs.time_to_train_s))
          << "front point " << i << " dominated by " << j;
    }
  }
  const nlohmann::json j = sizing_report_json(s, model, o, run);
  EXPECT_EQ(j["pareto"].size(), run.front.size());
  EXPECT_EQ(j["evaluated"].size(), run.points.size());
  EXPECT_EQ(j["max_plans"], 2);
  EXPECT_EQ(j["pareto"][0]["plan"], "kind: test\n");
}

TEST(SizingRun, WithReliabilityEveryTimeToTrainIsTheSimulatedRateTimesTheExpectedGoodput) {
  Sizing s = load_sizing(test::source_dir() / "tests/fixtures/sizing/small.yaml");
  Reliability r;
  r.gpu_failures_per_year = 50;  // a bad year: goodput visibly under 1 on a few GPUs
  s.reliability = r;
  const ModelSpec model = load_model(test::shipped("workloads", s.model));
  const PlanMixes plan = [](const std::vector<Mix>& ms, const std::string&) {
    std::vector<PlannedMix> out;
    for (const Mix& m : ms) {
      PlannedMix p;
      p.status = "ok";
      p.samples_per_s = 10.0 * static_cast<double>(m.gpus);
      out.push_back(p);
    }
    return out;
  };
  const SizingRun run = run_sizing(s, model, enumerate_mixes(s, 100000), SizingOptions{}, plan, [](const std::string&) {});
  ASSERT_FALSE(run.points.empty());
  const ModelNeeds needs = model_needs(model);
  for (const SizingPoint& p : run.points) {
    const Goodput g = expected_goodput(r, p.mix.gpus, p.mix.nodes, needs.checkpoint_bytes);
    EXPECT_LT(g.goodput, 1.0);
    EXPECT_DOUBLE_EQ(p.goodput.goodput, g.goodput);
    EXPECT_DOUBLE_EQ(p.costs.time_to_train_s, s.train_samples / (p.row.samples_per_s * g.goodput));
  }
  const nlohmann::json j = sizing_report_json(s, model, SizingOptions{}, run);
  EXPECT_TRUE(j["evaluated"][0].contains("goodput"));
  EXPECT_NE(j["assumptions"].back().get<std::string>().find("expected goodput"), std::string::npos);
}

}  // namespace
}  // namespace hetsim
