// File: tests/planner/planner_test.cpp
// The planner's one entry point (planner/planner.hpp): it runs every planner, chooses the smallest
// simulated time among hetsim's own candidates, reports the same rows and JSON the CLI prints, and
// owns its GPU limit (a library caller meets it too).
#include "planner/planner.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <limits>

#include "base/input_error.hpp"
#include "test_support.hpp"

namespace hetsim {
namespace {

TEST(Planner, ChoosesTheSmallestSimulatedTimeAmongItsOwnCandidates) {
  const ModelSpec model = load_model(test::shipped("workloads", "gpt3-1.3b"));
  const Cluster cluster = test::shipped_cluster("a100-v100-2x2");
  PlannerOptions o;
  o.candidates = 2;
  o.upper_bound = false;
  const PlanResult r = plan(model, cluster, CostModel::shipped(), SimOptions{}, o);
  ASSERT_NE(r.chosen(), nullptr);
  double best = std::numeric_limits<double>::infinity();
  for (const JudgedCandidate& j : r.spmd.judged) {
    if (j.evaluation.report.feasible) best = std::min(best, j.evaluation.report.iteration_time_s);
  }
  for (const JudgedHybrid& j : r.hybrid.judged) best = std::min(best, j.evaluation.report.iteration_time_s);
  EXPECT_EQ(r.chosen()->report.iteration_time_s, best);
  EXPECT_TRUE((r.chosen_spmd() != nullptr) != (r.chosen_hybrid() != nullptr));
  EXPECT_TRUE(r.nothing_fits.empty());
  // The rows: hetsim's candidates first, then the comparison modes and every baseline.
  EXPECT_EQ(r.first_baseline, r.candidates());
  EXPECT_EQ(r.rows.size() - r.first_baseline, r.baselines.size() + 3);  // hap-faithful, hethub-faithful, megatron-uniform
  const nlohmann::json j = r.to_json();
  EXPECT_EQ(j["candidates"].size(), r.candidates());
  EXPECT_EQ(j["baselines"].size(), r.rows.size() - r.first_baseline);
  EXPECT_EQ(j["iteration_time_s"], best);
  EXPECT_FALSE(j.contains("upper_bound_samples_per_s"));  // not asked for
  EXPECT_TRUE(j.contains("search") && j.contains("hybrid_search"));
}

TEST(Planner, OnOneGpuTypeTheUpperBoundTakesItsOwnSearchesAndEqualsThePlannedOne) {
  // One node type, every switch at its default: the bound comes from the run's own first
  // candidates instead of planning the same cluster again, bit for bit what planning it gives.
  const ModelSpec model = load_model(test::shipped("workloads", "gpt3-1.3b"));
  const Cluster cluster = test::shipped_cluster("a100-v100-2x2").only_node_type(0);
  const PlanResult r = plan(model, cluster, CostModel::shipped(), SimOptions{}, PlannerOptions{});
  std::vector<std::string> notes;
  const double planned = plan_upper_bound(model, cluster, CostModel::shipped(), SimOptions{}, notes);
  ASSERT_GT(planned, 0);
  const std::optional<double> own = own_references_bound(r, PlannerOptions{}, model, cluster);
  ASSERT_TRUE(own.has_value());
  EXPECT_EQ(*own, planned);
  EXPECT_EQ(r.bound, planned);
  EXPECT_EQ(std::count(r.notes.begin(), r.notes.end(), notes.back()), 1);
  // A switch turned off: the references are planned as the bound says (whatever a run turns off).
  PlannerOptions no_zero1;
  no_zero1.hybrid.zero1 = false;
  const PlanResult ablated = plan(model, cluster, CostModel::shipped(), SimOptions{}, no_zero1);
  EXPECT_FALSE(own_references_bound(ablated, no_zero1, model, cluster).has_value());
  EXPECT_EQ(ablated.bound, planned);
  // Two GPU types: planned.
  EXPECT_FALSE(own_references_bound(r, PlannerOptions{}, model, test::shipped_cluster("a100-v100-2x2")).has_value());
}

TEST(Planner, NothingOfItsOwnAskedForChoosesNothingAndSaysNothingIsMissing) {
  const ModelSpec model = load_model(test::shipped("workloads", "gpt3-1.3b"));
  PlannerOptions o;
  o.spmd = o.pipeline = o.upper_bound = false;
  const PlanResult r = plan(model, test::shipped_cluster("a100-v100-2x2"), CostModel::shipped(), SimOptions{}, o);
  EXPECT_EQ(r.chosen(), nullptr);
  EXPECT_TRUE(r.nothing_fits.empty());  // only the baselines were asked for
  EXPECT_EQ(r.rows.size(), r.baselines.size());  // no candidate rows, no comparison modes: no search ran
  const nlohmann::json j = r.to_json();
  EXPECT_FALSE(j.contains("search"));
  EXPECT_FALSE(j.contains("hybrid_search"));
}

TEST(Planner, OwnsItsGpuLimit) {
  // A library caller meets the limit as the CLI does (one node past it).
  const int nodes = kMaxPlanGpus / 8 + 1;
  const std::filesystem::path c = std::filesystem::temp_directory_path() / ("hetsim_planner_huge_" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(c) << "name: huge\nnode_types:\n  - {name: a, count: " << nodes << ", gpu: A100-SXM4-40GB, gpus_per_node: 8,\n"
                      "     intra_node: {fabric: nvswitch, bandwidth: 300GBps, latency: 1us}, nic: {count: 8, bandwidth: 200Gbps, latency: 2us}}\n"
                      "network: {topology: fat-tree, switch_latency: 1us}\n";
  const Cluster big = load_cluster(c);
  std::filesystem::remove(c);
  try {
    (void)plan(load_model(test::shipped("workloads", "bert-base")), big, CostModel{}, SimOptions{}, PlannerOptions{});
    ADD_FAILURE() << "a cluster over kMaxPlanGpus was planned";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("hetsim plan searches clusters of at most " + std::to_string(kMaxPlanGpus) + " GPUs"),
              std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace hetsim

namespace hetsim {
namespace {

TEST(SimulatedFaster, TimesWithinFloatingPointNoiseAreATieThatTheFirstPlanKeeps) {
  // Two plans simulated to 72.89232691256491 s and 72.89232691256476 s: the same plan in all but the
  // order SimGrid summed its flows (found: a rewrite of the program's order swapped the pick).
  EXPECT_FALSE(simulated_faster(72.89232691256476, 72.89232691256491));
  EXPECT_FALSE(simulated_faster(72.89232691256491, 72.89232691256476));
  EXPECT_FALSE(simulated_faster(1.0, 1.0));
  EXPECT_TRUE(simulated_faster(1.0, 1.0 + 1e-6));
  EXPECT_FALSE(simulated_faster(1.0 + 1e-6, 1.0));
}

}  // namespace
}  // namespace hetsim
