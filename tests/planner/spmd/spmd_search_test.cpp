// File: tests/planner/spmd/spmd_search_test.cpp
#include "planner/spmd/spmd_search.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "base/data_dir.hpp"
#include "planner/spmd/sharding.hpp"
#include "planner/spmd/spmd_problem.hpp"
#include "test_support.hpp"

namespace hetsim {
namespace {

ModelSpec tiny_model(long hidden, long global_batch) {
  ModelSpec m;
  m.name = "tiny";
  m.family = Family::kGpt;
  m.layers = 1;
  m.hidden = hidden;
  m.heads = 8;
  m.kv_heads = 8;
  m.ffn_hidden = 4 * hidden;
  m.seq_len = 256;
  m.vocab = 8192;
  m.training.global_batch = global_batch;
  m.training.micro_batch = global_batch;
  return m;
}

// The first `ops` operators of a one-layer model on the default cluster.
SpmdProblem small_problem(long hidden, long batch, size_t ops) {
  const Cluster c = load_cluster(test::shipped("topologies", "a100-v100-2x2"));
  SpmdProblem p = build_spmd_problem(tiny_model(hidden, batch), c, CostModel{});
  p.ops.resize(ops);
  return p;
}

TEST(SpmdSearch, AdmissibleHeuristicFindsTheExhaustiveOptimumExpandingFewerStates) {
  long astar_total = 0, uniform_total = 0;
  for (const auto& [hidden, batch] : {std::pair<long, long>{512, 64}, {8192, 32}, {16384, 32}}) {
    for (CostMode mode : {CostMode::kBarrier, CostMode::kOverlap}) {
      const SpmdProblem p = small_problem(hidden, batch, 9);
      const std::vector<double> r = speed_ratios(p);
      SearchOptions o;
      o.cost = mode;
      o.memory_limit = false;
      const SearchResult brute = enumerate_programs(p, r, o);
      o.heuristic = Heuristic::kAdmissible;
      const SearchResult astar = search_program(p, r, o);
      o.heuristic = Heuristic::kZero;
      const SearchResult uniform = search_program(p, r, o);
      ASSERT_TRUE(brute.found && astar.found && uniform.found);
      SCOPED_TRACE("hidden " + std::to_string(hidden));
      EXPECT_NEAR(astar.program.cost_s, brute.program.cost_s, 1e-12 * brute.program.cost_s);
      EXPECT_NEAR(uniform.program.cost_s, brute.program.cost_s, 1e-12 * brute.program.cost_s);
      EXPECT_NEAR(program_cost(p, r, o, astar.program.choices), astar.program.cost_s, 1e-12 * brute.program.cost_s);
      EXPECT_LE(astar.stats.expanded, uniform.stats.expanded);
      EXPECT_LT(uniform.stats.expanded, brute.stats.expanded);
      astar_total += astar.stats.expanded;
      uniform_total += uniform.stats.expanded;
    }
  }
  EXPECT_LT(astar_total, uniform_total);  // strictly fewer where the choice is not obvious
}

TEST(SpmdSearch, LargeBatchSmallModelIsDataParallel) {
  const Cluster c = load_cluster(test::shipped("topologies", "a100-v100-2x2"));
  const SpmdProblem p = build_spmd_problem(load_model(test::shipped("workloads", "bert-base")), c, CostModel{});
  const SearchResult s = search_program(p, speed_ratios(p), SearchOptions{});
  ASSERT_TRUE(s.found);
  // Every transformer layer runs data-parallel (the embedding may be sharded: its table is large).
  for (size_t i = 0; i < p.ops.size(); ++i) {
    if (p.ops[i].name.starts_with("layer")) {
      EXPECT_EQ(p.ops[i].rules[s.program.choices[i].rule].name, "data") << p.ops[i].name;
    }
  }
}

TEST(SpmdSearch, EveryRuleGivesALayoutForEachInputOfItsOp) {
  // Every shipped model's operators (multi-token prediction heads, hybrid and latent MoE layers among
  // them): a rule with fewer input layouts than its op has inputs crashed the search (a model with
  // mtp_layers read past the embedding rules' none, found 2026-12-07).
  for (const std::string& name : shipped_names("workloads")) {
    const ModelSpec m = load_model(test::shipped("workloads", name));
    for (const Op& op : build_op_graph(m, 1, m.training.dtype).ops) {
      for (const Rule& r : rules_for(op)) ASSERT_EQ(r.inputs.size(), op.inputs.size()) << name << " " << op.name << " " << r.name;
    }
  }
  // And a small model with a prediction module is planned (it was a segmentation fault).
  ModelSpec m = tiny_model(256, 16);
  m.mtp_layers = 1;
  m.layers = 2;
  const SpmdProblem p = build_spmd_problem(m, load_cluster(test::shipped("topologies", "a100-v100-2x2")), CostModel{});
  EXPECT_TRUE(search_program(p, speed_ratios(p), SearchOptions{}).found);
}

TEST(SpmdSearch, MemoryLimitIsNeverExceeded) {
  // gpt3-1.3b holds ~21 GB of model state data-parallel, and one sample's activations are ~11.5 GB
  // (24 layers of sbh(34 + 5as/h) bytes, dropout masks included); with 20 GB per GPU the plan must
  // shard parameters (tensor parallel or ZeRO), and fit.
  const Cluster c = load_cluster(test::shipped("topologies", "a100-v100-2x2"));
  SpmdProblem p = build_spmd_problem(load_model(test::shipped("workloads", "gpt3-1.3b")), c, CostModel{});
  p.memory_capacity.assign(p.devices, 20e9);
  const std::vector<double> r = speed_ratios(p);
  SearchOptions o;
  const SearchResult s = search_program(p, r, o);
  ASSERT_TRUE(s.found);
  EXPECT_TRUE(std::isfinite(program_cost(p, r, o, s.program.choices)));  // memory checked again, exactly
  int sharded = 0;
  for (size_t i = 0; i < p.ops.size(); ++i) sharded += stored_sharded(p.ops[i].rules[s.program.choices[i].rule].params);
  EXPECT_GT(sharded, 0);
  // Without the limit, plain data parallelism is cheaper but would not fit.
  o.memory_limit = false;
  const SearchResult free = search_program(p, r, o);
  EXPECT_LE(free.program.cost_s, s.program.cost_s);
  o.memory_limit = true;
  EXPECT_FALSE(std::isfinite(program_cost(p, r, o, free.program.choices)));
}

TEST(SpmdSearch, ImpossibleModelIsReportedNotCrashed) {
  const Cluster c = load_cluster(test::shipped("topologies", "hap-v100-p100"));
  ModelSpec m = load_model(test::shipped("workloads", "llama2-13b"));
  m.training.dtype_fallback = DType::kFp16;
  m.layers = 400;  // ~130 B parameters: more than the cluster's memory
  const SpmdProblem p = build_spmd_problem(m, c, CostModel{});
  EXPECT_FALSE(search_program(p, speed_ratios(p), SearchOptions{}).found);
}

}  // namespace
}  // namespace hetsim

namespace hetsim {
namespace {

// Sufficient factor broadcasting against all-reducing the weight gradient, for layers run data-
// parallel: the problem keeps only each operator's data rule (where it has one).
SpmdProblem data_parallel_only(SpmdProblem p) {
  for (SpmdOp& op : p.ops) {
    std::vector<Rule> keep;
    for (const Rule& r : op.rules) {
      if (r.name == "data") keep.push_back(r);
    }
    if (!keep.empty()) op.rules = keep;
  }
  return p;
}

TEST(SufficientFactors, ChosenForVggClassifierNotForBert) {
  const Cluster c = load_cluster(test::shipped("topologies", "hap-v100-p100"));
  SearchOptions o;
  o.memory_limit = false;
  // VGG19 at 32 images per GPU: the 25088x4096 and 4096x4096 layers' factors (batch x (in + out))
  // are smaller than their weight gradients (in x out).
  const SpmdProblem vgg = data_parallel_only(build_spmd_problem(load_model(test::shipped("workloads", "vgg19")), c, CostModel{}));
  const SearchResult v = search_program(vgg, speed_ratios(vgg), o);
  ASSERT_TRUE(v.found);
  std::map<std::string, bool> sfb;
  for (size_t i = 0; i < vgg.ops.size(); ++i) sfb[vgg.ops[i].name] = v.program.choices[i].sfb;
  EXPECT_TRUE(sfb.at("fc16"));
  EXPECT_TRUE(sfb.at("fc17"));
  EXPECT_FALSE(sfb.at("classifier"));  // 4096 x 10: the gradient is tiny
  EXPECT_FALSE(sfb.at("conv15"));      // not a linear layer
  // BERT-base: the factors are batch x sequence rows, far more than any weight.
  ModelSpec bert = load_model(test::shipped("workloads", "bert-base"));
  bert.training.global_batch = 2048;
  bert.training.micro_batch = 32;
  const SpmdProblem bp = data_parallel_only(build_spmd_problem(bert, c, CostModel{}));
  const SearchResult b = search_program(bp, speed_ratios(bp), o);
  ASSERT_TRUE(b.found);
  for (size_t i = 0; i < bp.ops.size(); ++i) EXPECT_FALSE(b.program.choices[i].sfb) << bp.ops[i].name;
}

TEST(SpmdSearch, FewerSamplesThanDevicesSplitNoBatch) {
  // A global batch of 8 samples on 32 GPUs: a batch split would give each GPU a fraction of a
  // sample (the shares are continuous), so no operator may split the batch.
  const Cluster c = load_cluster(test::shipped("topologies", "a100-v100-2x2"));
  ModelSpec m = load_model(test::shipped("workloads", "bert-base"));
  m.training.global_batch = 8;
  m.training.micro_batch = 8;
  const SpmdProblem p = build_spmd_problem(m, c, CostModel{});
  size_t rules = 0;
  for (const SpmdOp& op : p.ops) {
    for (const Rule& r : op.rules) EXPECT_NE(r.name, "data") << op.name;
    rules += op.rules.size();
  }
  EXPECT_GT(rules, p.ops.size());  // other ways than replication remain
  m.training.global_batch = 32;  // one sample each: the batch may be split
  const SpmdProblem q = build_spmd_problem(m, c, CostModel{});
  EXPECT_TRUE(std::any_of(q.ops.front().rules.begin(), q.ops.front().rules.end(), [](const Rule& r) { return r.name == "data"; }));
  const SearchResult s = search_program(p, speed_ratios(p), SearchOptions{});
  EXPECT_TRUE(s.found);
}

}  // namespace
}  // namespace hetsim
