// File: tests/planner/kept_plan_test.cpp
// What-ifs that separate the hardware from the planner: a plan file run on another cluster
// (run_plan_file, as a held what-if runs the baseline's plan), and a plan kept among a re-planned
// scenario's candidates (PlannerOptions::keep_plan), so an upgrade never looks worse because the
// search missed.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>

#include "base/field_override.hpp"
#include "planner/hybrid/hybrid_plan_file.hpp"
#include "planner/planner.hpp"
#include "planner/spmd/plan_file.hpp"
#include "test_support.hpp"

namespace hetsim {
namespace {

PlannerOptions quick() {
  PlannerOptions o;
  o.candidates = 1;
  o.upper_bound = false;
  return o;
}

// The chosen plan of `r` as `hetsim plan --emit-plan` writes it (planner's emitted_plan), in a file of its own.
std::filesystem::path emitted_plan(const PlanResult& r, const ModelSpec& model, const Cluster& cluster, const std::string& name) {
  const std::filesystem::path file = std::filesystem::temp_directory_path() /
                                     ("hetsim-kept-plan-" + std::to_string(::getpid()) + "-" + name + ".yaml");
  std::ofstream(file) << hetsim::emitted_plan(r, model, cluster, quick());
  return file;
}

TEST(KeptPlan, IsSimulatedBesideTheCandidatesAndChosenOnlyWhereFastest) {
  const ModelSpec model = load_model(test::shipped("workloads", "gpt3-1.3b"));
  const Cluster cluster = test::shipped_cluster("a100-v100-2x2");
  const PlanResult base = plan(model, cluster, CostModel::shipped(), SimOptions{}, quick());
  ASSERT_NE(base.chosen(), nullptr);
  const std::filesystem::path file = emitted_plan(base, model, cluster, "base");
  // Kept on its own cluster: the same plan, the same time, bit for bit; nothing faster than the search's best.
  PlannerOptions keep = quick();
  keep.keep_plan = file.string();
  const PlanResult again = plan(model, cluster, CostModel::shipped(), SimOptions{}, keep);
  ASSERT_TRUE(again.kept.has_value());
  EXPECT_TRUE(again.kept->applies) << again.kept->why_not;
  EXPECT_EQ(again.kept->iteration_time_s, base.chosen()->report.iteration_time_s);
  EXPECT_LE(again.chosen()->report.iteration_time_s, again.kept->iteration_time_s);
  EXPECT_EQ(again.candidates(), base.candidates() + 1);
  const nlohmann::json j = again.to_json();
  ASSERT_TRUE(j.contains("kept_plan"));
  EXPECT_EQ(j["kept_plan"]["iteration_time_s"], again.kept->iteration_time_s);
  // With the search told to miss (one stage type, no pipelines), the kept plan wins where it is faster.
  PlannerOptions narrow = keep;
  narrow.pipeline = base.chosen_hybrid() == nullptr;
  narrow.spmd = base.chosen_hybrid() != nullptr;
  const PlanResult missed = plan(model, cluster, CostModel::shipped(), SimOptions{}, narrow);
  ASSERT_NE(missed.chosen(), nullptr);
  EXPECT_LE(missed.chosen()->report.iteration_time_s, base.chosen()->report.iteration_time_s);
  EXPECT_EQ(missed.kept->chosen, missed.chosen()->report.strategy == "kept plan");
  // A plan made for other GPUs does not apply, and says why; the search's candidates compete alone.
  const PlanResult other = plan(model, cluster.only_node_type(0), CostModel::shipped(), SimOptions{}, keep);
  ASSERT_TRUE(other.kept.has_value());
  EXPECT_FALSE(other.kept->applies);
  EXPECT_FALSE(other.kept->why_not.empty());
  EXPECT_NE(other.chosen(), nullptr);
  EXPECT_FALSE(other.to_json()["kept_plan"]["applies"].get<bool>());
  std::filesystem::remove(file);
}

TEST(KeptPlan, ARenumberingOfItsGpusIsRefusedAndGpusAddedAfterThemLeaveItAsItWas) {
  // A node of the first type added before the second type's renumbers the second type's GPUs: the
  // plan's stages would run on other GPU types, silently (a held sweep read 3.9 s where 2.1 s ran,
  // the new-user audit of 2026-12-07). Each stage's `node_type` catches it; a node added last changes
  // no number, and the plan runs as it was, the new GPUs idle (a GPU swapped in a node type, the held
  // upgrade of HoldPlan's tests, keeps its numbers and is not refused).
  const ModelSpec model = load_model(test::shipped("workloads", "gpt3-1.3b"));
  const Cluster cluster = test::shipped_cluster("a100-v100-2x2");
  PlannerOptions hybrid_only = quick();
  hybrid_only.spmd = false;
  const PlanResult base = plan(model, cluster, CostModel::shipped(), SimOptions{}, hybrid_only);
  ASSERT_NE(base.chosen_hybrid(), nullptr);
  const std::filesystem::path file = emitted_plan(base, model, cluster, "renumbered");
  const auto with_count = [&](int type) {
    const std::string set = "cluster.node_types[" + std::to_string(type) + "].count=" + std::to_string(cluster.node_types[static_cast<size_t>(type)].count + 1);
    return load_cluster(test::shipped("topologies", "a100-v100-2x2"), overrides_for({parse_override(set)}, "cluster"));
  };
  try {
    (void)load_hybrid_plan(file, model, with_count(0));
    ADD_FAILURE() << "a plan whose stages now fall on other GPU types was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("this stage was planned on the GPUs of node type " + cluster.node_types[1].name), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("renumbers the GPUs after them"), std::string::npos) << e.what();
  }
  PlannerOptions keep = hybrid_only;
  keep.keep_plan = file.string();
  const PlanResult before = plan(model, with_count(0), CostModel::shipped(), SimOptions{}, keep);
  ASSERT_TRUE(before.kept.has_value());
  EXPECT_FALSE(before.kept->applies);
  const PlanResult after = plan(model, with_count(1), CostModel::shipped(), SimOptions{}, keep);
  ASSERT_TRUE(after.kept.has_value());
  EXPECT_TRUE(after.kept->applies) << after.kept->why_not;
  std::filesystem::remove(file);
}

TEST(KeptPlan, AnSpmdPlanWhoseSharesWouldLandOnAnotherNodeTypeIsRefused) {
  // SPMD plans give every GPU a share by number. One A100 node fewer and one V100 node more keeps the
  // GPU count, so the shares' count cannot catch it; their node_types do, at that field.
  const ModelSpec model = load_model(test::shipped("workloads", "bert-base"));
  const Cluster cluster = test::shipped_cluster("a100-v100-2x2");
  PlannerOptions spmd_only = quick();
  spmd_only.pipeline = false;
  const PlanResult base = plan(model, cluster, CostModel::shipped(), SimOptions{}, spmd_only);
  ASSERT_NE(base.chosen_spmd(), nullptr);
  const std::filesystem::path file = emitted_plan(base, model, cluster, "spmd-renumbered");
  std::ifstream in(file);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("node_types:\n  - {name: dgx-a100, gpus: 16}\n  - {name: dgx1-v100, gpus: 16}\n"), std::string::npos) << text;
  check_plan_file(file.string(), model, cluster, CostModel::shipped());  // its own cluster reads it
  const Cluster moved = load_cluster(test::shipped("topologies", "a100-v100-2x2"),
                                     overrides_for({parse_override("cluster.node_types[0].count=1"),
                                                    parse_override("cluster.node_types[1].count=3")},
                                                   "cluster"));
  try {
    check_plan_file(file.string(), model, moved, CostModel::shipped());
    ADD_FAILURE() << "an SPMD plan whose shares now fall on other node types was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("node_types"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("gpu8 was on node type \"dgx-a100\" when planned and is on \"dgx1-v100\""), std::string::npos)
        << e.what();
  }
  std::filesystem::remove(file);
}

// One random upgrade of a node type: its NICs or its intra-node links 1-4x as fast, or its GPU
// swapped for a faster one with at least its memory. The --set that makes it.
std::string random_upgrade(const Cluster& c, std::mt19937_64& rng, std::string& what) {
  static const std::map<std::string, std::string> faster = {
      {"A100-SXM4-40GB", "A100-SXM4-80GB"}, {"A100-SXM4-80GB", "H100-SXM5-80GB"}, {"V100-SXM2-16GB", "V100-SXM2-32GB"},
      {"V100-SXM2-32GB", "A100-SXM4-40GB"}, {"H100-SXM5-80GB", "H200-SXM-141GB"}, {"MI250X", "MI300X"},
      {"MI300X", "MI325X"},
  };
  const size_t t = std::uniform_int_distribution<size_t>(0, c.node_types.size() - 1)(rng);
  const NodeType& n = c.node_types[t];
  const std::string at = "cluster.node_types[" + std::to_string(t) + "].";
  const double factor = std::uniform_real_distribution<double>(1.0, 4.0)(rng);
  char value[64];
  switch (std::uniform_int_distribution<int>(0, 2)(rng)) {
    case 0:
      std::snprintf(value, sizeof value, "%.6gGBps", n.nic.bandwidth_Bps * factor / 1e9);
      what = n.name + " NICs x" + std::to_string(factor);
      return at + "nic.bandwidth=" + value;
    case 1:
      std::snprintf(value, sizeof value, "%.6gGBps", n.intra.bandwidth_Bps * factor / 1e9);
      what = n.name + " intra-node links x" + std::to_string(factor);
      return at + "intra_node.bandwidth=" + value;
    default: {
      const auto up = faster.find(n.gpu.name);
      if (up == faster.end()) return random_upgrade(c, rng, what);
      what = n.name + " GPUs " + n.gpu.name + " -> " + up->second;
      return at + "gpu=" + up->second;
    }
  }
}

TEST(HoldPlan, NoNicLinkOrGpuUpgradeSlowsAHeldPlanOnTheShippedClusters) {
  // Property: the baseline's plan, held fixed, runs no slower on upgraded hardware. Random
  // upgrades, seeded (the seed is in every failure's message).
  constexpr uint64_t kSeed = 20261128;
  std::mt19937_64 rng(kSeed);
  const ModelSpec model = load_model(test::shipped("workloads", "gpt3-1.3b"));
  for (const std::string name : {"a100-v100-2x2", "a100-mi250x", "h100-mi300x", "pair-a100-h100"}) {
    const Cluster cluster = test::shipped_cluster(name);
    const PlanResult base = plan(model, cluster, CostModel::shipped(), SimOptions{}, quick());
    ASSERT_NE(base.chosen(), nullptr) << name;
    const std::filesystem::path file = emitted_plan(base, model, cluster, name);
    const double before = run_plan_file(file.string(), model, cluster, CostModel::shipped(), SimOptions{}, "held").evaluation.report.iteration_time_s;
    EXPECT_EQ(before, base.chosen()->report.iteration_time_s) << name;
    for (int k = 0; k < 4; ++k) {
      std::string what;
      const std::string set = random_upgrade(cluster, rng, what);
      const Cluster upgraded = load_cluster(test::shipped("topologies", name), overrides_for({parse_override(set)}, "cluster"));
      const PlanFileRun held = run_plan_file(file.string(), model, upgraded, CostModel::shipped(), SimOptions{}, "held");
      ASSERT_TRUE(held.evaluation.report.feasible) << name << ", " << what << " (seed " << kSeed << "): " << held.evaluation.report.infeasible_reason;
      EXPECT_LE(held.evaluation.report.iteration_time_s, before * (1 + 1e-12))
          << name << ": " << what << " (--set " << set << ", seed " << kSeed << ") made the held plan slower";
    }
    std::filesystem::remove(file);
  }
}

}  // namespace
}  // namespace hetsim
