// File: tests/planner/hybrid/partial_recompute_test.cpp
// Megatron-Core's selective recompute by module (recompute_modules): what each module frees and
// repeats on DeepSeek-V3's layers (a dense layer and an MoE layer with latent attention and a shared
// expert), computed here from the operator graph; the plan and run file fields; and combined 1F1B
// still pairing a forward's parts with a backward's when the backward recomputes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <map>

#include "base/input_error.hpp"
#include "planner/hybrid/hybrid_plan_file.hpp"
#include "planner/hybrid/hybrid_planner.hpp"
#include "planner/hybrid/megatron_args.hpp"
#include "planner/hybrid/stage_work.hpp"
#include "one_stage_plan.hpp"
#include "test_support.hpp"

namespace hetsim {
namespace {

// DeepSeek-V3 cut to 4 layers: 0-2 dense (as in the model), 3 with experts.
ModelSpec deepseek4() {
  ModelSpec m = load_model(test::shipped("workloads", "deepseek-v3"));
  m.layers = 4;
  return m;
}

struct Expected {
  double seconds = 0, freed = 0;
};

// Each module's forward seconds and freed bytes for the layer of `block`, from the graph: the
// operators Megatron-Core's modules wrap, and what is kept of their outputs.
std::map<std::string, Expected> expected(const ModelSpec& m, const Device& d, int layer) {
  const OpGraph g = build_op_graph(m, 1, DType::kBf16, {true});
  const CostModel cost;
  const auto op = [&](const std::string& n) -> const Op& {
    const std::string name = "layer" + std::to_string(layer) + "." + n;
    const auto it = std::find_if(g.ops.begin(), g.ops.end(), [&](const Op& o) { return o.name == name; });
    EXPECT_NE(it, g.ops.end()) << name;
    return *it;
  };
  const auto has = [&](const std::string& n) {
    const std::string name = "layer" + std::to_string(layer) + "." + n;
    return std::any_of(g.ops.begin(), g.ops.end(), [&](const Op& o) { return o.name == name; });
  };
  const auto t = [&](const std::string& n) { return cost.op_time(d, op(n), DType::kBf16, Pass::kForward).seconds; };
  std::map<std::string, Expected> e;
  const bool moe = has("expert_act");
  // The attention's norm is read by q_down and kv_down (q_down keeps it); the MLP's, in an MoE layer,
  // by the router (which keeps it), the permutation and the shared expert. A dense MLP's norm is
  // fused into its first projection: not recomputed by layernorm.
  e["layernorm"] = {t("attn_norm") + (moe ? t("mlp_norm") : 0), op("q_down").saved_bytes + (moe ? op("router").saved_bytes : 0)};
  const Op& att = op("attention");
  const double lse = static_cast<double>(att.gemm.batch) * static_cast<double>(att.gemm.m) * 4;
  e["mla_up_proj"] = {t("q_norm") + t("q_up") + t("kv_norm") + t("kv_up"),
                      op("q_up").saved_bytes + op("kv_up").saved_bytes + att.saved_bytes - lse};
  if (moe) {
    Expected whole;
    for (const char* n : {"router", "router_topk", "moe_permute", "expert_fc1", "expert_act", "expert_fc2", "moe_unpermute",
                          "shared_fc1", "shared_act", "shared_fc2"}) {
      whole.seconds += t(n);
      if (std::string(n) != "router") whole.freed += op(n).saved_bytes;  // the router keeps the layer's input
    }
    e["moe"] = whole;
    e["moe_act"] = {t("expert_act"), op("expert_fc2").saved_bytes};
    e["shared_experts"] = {t("shared_fc1") + t("shared_act") + t("shared_fc2"),
                           op("shared_fc1").saved_bytes + op("shared_act").saved_bytes + op("shared_fc2").saved_bytes};
  } else {
    e["mlp"] = {t("mlp_norm") + t("mlp_gate_up") + t("swiglu") + t("mlp_down"),
                op("mlp_gate_up").saved_bytes + op("swiglu").saved_bytes + op("mlp_down").saved_bytes};
  }
  return e;
}

RecomputeModules module_bit(const std::string& name) {
  const std::vector<std::string>& names = recompute_module_names();
  return 1u << static_cast<unsigned>(std::find(names.begin(), names.end(), name) - names.begin());
}

std::vector<BlockWork> work(const ModelSpec& m, const Device& d, RecomputeModules modules, int tp = 1) {
  StageWorkKey key{1, tp, false, RecomputeMode::kSelective, StageProgram::kMegatron};
  key.recompute_modules = modules;
  return stage_block_work(m, d, DType::kBf16, CostModel{}, key);
}

TEST(RecomputeModules, EachModuleFreesWhatItsReadersKeepAndRepeatsItsForward) {
  const ModelSpec m = deepseek4();
  const Device h100 = load_device(test::shipped("kernels_profile/devices", "H100-SXM5-80GB"));
  const std::vector<BlockWork> none = work(m, h100, kDefaultRecomputeModules);
  // Flash attention's core keeps no score tensor, and the router's softmax is not the attention's.
  for (const BlockWork& bw : none) EXPECT_EQ(bw.recompute_s, 0) << bw.name;
  RecomputeModules all = 0;
  for (const std::string& name : recompute_module_names()) {
    if (name == "core_attn") continue;
    all |= module_bit(name);
    const std::vector<BlockWork> w = work(m, h100, module_bit(name));
    for (int layer : {0, 3}) {
      const std::map<std::string, Expected> e = expected(m, h100, layer);
      const auto it = e.find(name);
      const Expected want = it == e.end() ? Expected{} : it->second;  // mlp in an MoE layer, moe_act in a dense one: nothing
      const BlockWork& got = w[static_cast<size_t>(layer) + 1];
      const BlockWork& base = none[static_cast<size_t>(layer) + 1];
      EXPECT_NEAR(got.recompute_s, want.seconds, 1e-12 * (1 + want.seconds)) << name << " layer " << layer;
      EXPECT_NEAR(base.saved_bytes - got.saved_bytes, want.freed, 1e-9 * base.saved_bytes) << name << " layer " << layer;
      EXPECT_NEAR(got.recompute_bytes, want.freed, 1e-9 * base.saved_bytes) << name << " layer " << layer;
      EXPECT_EQ(got.parts, base.parts) << name;  // the forward and backward themselves do not change
    }
  }
  // The modules are disjoint (moe aside, which holds moe_act and shared_experts): together they free
  // and repeat the sum of each.
  all &= ~module_bit("moe");
  const std::vector<BlockWork> w = work(m, h100, all);
  for (int layer : {0, 3}) {
    double seconds = 0, freed = 0;
    for (const auto& [name, x] : expected(m, h100, layer)) {
      if (name == "moe") continue;
      seconds += x.seconds;
      freed += x.freed;
    }
    EXPECT_NEAR(w[static_cast<size_t>(layer) + 1].recompute_s, seconds, 1e-12 * seconds);
    EXPECT_NEAR(none[static_cast<size_t>(layer) + 1].saved_bytes - w[static_cast<size_t>(layer) + 1].saved_bytes, freed, 1e-6 * freed);
  }
}

TEST(RecomputeModules, AnMoeLayerRecomputedWholeOrAFullRecomputeReissuesItsDispatchAndCombine) {
  // Under expert parallelism Megatron-Core's checkpoint of the MoE layer (and of the whole layer under
  // full recompute) runs the token dispatch and combine again.
  const ModelSpec m = deepseek4();
  const Device h100 = load_device(test::shipped("kernels_profile/devices", "H100-SXM5-80GB"));
  for (const RecomputeMode mode : {RecomputeMode::kSelective, RecomputeMode::kFull}) {
    StageWorkKey key{1, 1, false, mode, StageProgram::kMegatron};
    key.ep = 8;
    key.recompute_modules = module_bit("moe");
    const std::vector<BlockWork> w = stage_block_work(m, h100, DType::kBf16, CostModel{}, key);
    for (int layer : {0, 3}) {
      const BlockWork& bw = w[static_cast<size_t>(layer) + 1];
      TpBytes sent;
      double rail = 0;
      for (const WorkPart& p : bw.parts) {
        sent += p.ep_fwd;
        rail += p.ep_rail_fwd;
      }
      EXPECT_EQ(sent.any(), layer == 3);
      EXPECT_EQ(bw.recompute_ep, sent) << layer;
      EXPECT_EQ(bw.recompute_ep_rail, rail) << layer;
    }
  }
}

TEST(RecomputeModules, AnMlpRecomputedUnderTpReissuesItsCollectives) {
  // Megatron-Core checkpoints the dense MLP module whole: its row-parallel projection's all-reduce
  // runs again; the output-discarding norm recompute has no collective.
  ModelSpec m = load_model(test::shipped("workloads", "llama3-70b"));
  m.layers = 2;
  const Device h100 = load_device(test::shipped("kernels_profile/devices", "H100-SXM5-80GB"));
  const std::vector<BlockWork> mlp = work(m, h100, module_bit("mlp"), 4);
  const double tokens = static_cast<double>(m.seq_len), e = 2;
  EXPECT_DOUBLE_EQ(mlp[1].recompute_tp.all_reduce, tokens * static_cast<double>(m.hidden) * e);
  EXPECT_GT(mlp[1].recompute_s, 0);
  // Llama's norms are each read by one linear layer: fused, nothing for layernorm to recompute.
  const std::vector<BlockWork> norms = work(m, h100, module_bit("layernorm"), 4);
  EXPECT_EQ(norms[1].recompute_s, 0);
  EXPECT_FALSE(norms[1].recompute_tp.any());
}

TEST(RecomputeModules, PlanFilesCarryThemAndRefuseWhatMegatronCoreRefuses) {
  const ModelSpec m = load_model(test::shipped("workloads", "mixtral-8x7b"));
  const Cluster c = test::h100_nodes(1);
  HybridPlan p = test::one_stage_plan(8, static_cast<int>(m.layers), m.training.global_batch / 8, 8, 1, 8);
  p.recompute = RecomputeMode::kSelective;
  p.recompute_modules = module_bit("layernorm") | module_bit("moe_act");
  EXPECT_TRUE(check_hybrid_plan(p, m, c).empty());
  EXPECT_NE(p.shape().find("recompute selective (layernorm, moe_act)"), std::string::npos) << p.shape();
  EXPECT_NE(megatron_args(p, m, c).args.find("--recompute-granularity selective --recompute-modules layernorm moe_act"),
            std::string::npos);
  EXPECT_EQ(test::read_edited_plan(p, m, c).plan->recompute_modules, p.recompute_modules);
  // Latent attention's up projections need latent attention (Megatron-Core raises the same).
  p.recompute_modules = module_bit("mla_up_proj");
  const std::vector<PlanProblem> bad = check_hybrid_plan(p, m, c);
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0].field, "recompute_modules");
  EXPECT_NE(bad[0].message.find("no mla: block"), std::string::npos) << bad[0].message;
  // The MoE layer recomputed whole is refused beside combined 1F1B, as Megatron-Core refuses it.
  HybridPlan paired = p;
  paired.recompute_modules = module_bit("moe");
  EXPECT_TRUE(check_hybrid_plan(paired, m, c).empty());
  paired.overlap_moe_expert_parallel_comm = true;
  ASSERT_EQ(check_hybrid_plan(paired, m, c).size(), 1u);
  EXPECT_NE(check_hybrid_plan(paired, m, c)[0].message.find("refuses the two together"), std::string::npos);
  // Fields: a module list beside another recompute, a module hetsim does not model, a typo, a repeat.
  for (const auto& [edit, says] : std::vector<std::pair<std::string, std::string>>{
           {"recompute: full\nrecompute_modules: [moe_act]", "recompute is full"},
           {"recompute: selective\nrecompute_modules: [moe_layer]", "not a module"},
           {"recompute: selective\nrecompute_modules: [moe_actt]", "not a module"},
           {"recompute: selective\nrecompute_modules: [moe_act, moe_act]", "listed twice"}}) {
    const test::EditedPlanRead r = test::read_edited_plan(p, m, c, "recompute: selective\nrecompute_modules: [mla_up_proj]", edit);
    EXPECT_FALSE(r.plan) << edit << ": accepted";
    EXPECT_NE(r.error.find("recompute_modules"), std::string::npos) << r.error;
    EXPECT_NE(r.error.find(says), std::string::npos) << r.error;
  }
}

// Mixtral 8x7B (4 layers) on 8 H100, ep 8: the iteration time with and without combined 1F1B.
double mixtral_time(bool combined, RecomputeModules modules) {
  ModelSpec m = load_model(test::shipped("workloads", "mixtral-8x7b"));
  m.layers = 4;
  m.seq_len = 4096;
  m.training.global_batch = 32;
  const Cluster c = test::h100_nodes(1);
  HybridPlan p = test::one_stage_plan(8, 4, 4, 8, 1, 8);
  p.gradient_sync = GradientSync::kZero1;
  p.overlap_moe_expert_parallel_comm = combined;
  p.recompute = RecomputeMode::kSelective;
  p.recompute_modules = modules;
  EXPECT_TRUE(check_hybrid_plan(p, m, c).empty());
  HybridPlanner planner(m, c, CostModel{}, SimOptions{});
  const Evaluation ev = planner.evaluate(p, "recompute");
  EXPECT_TRUE(ev.report.feasible) << ev.report.infeasible_reason;
  return ev.report.iteration_time_s;
}

TEST(RecomputeModules, CombinedOneFOneBStillPairsEachForwardPartWithABackwardPart) {
  // A backward that recomputes runs the recompute inside its first part (as Megatron-Core runs a
  // module's recompute inside that module's backward), so the pairs stay aligned: the recompute
  // costs combined 1F1B about what it costs without it, never the misaligned pairs' lost overlap.
  const RecomputeModules some = module_bit("layernorm") | module_bit("moe_act");
  const double plain = mixtral_time(false, some) - mixtral_time(false, kDefaultRecomputeModules);
  const double combined = mixtral_time(true, some) - mixtral_time(true, kDefaultRecomputeModules);
  EXPECT_GT(plain, 0);
  EXPECT_GT(combined, 0);
  // (A separate recompute unit shifted every later pair by one: 1.28 times the plain cost here.)
  EXPECT_LT(combined, 1.1 * plain) << plain << " " << combined;
}


TEST(RecomputeLayers, TheBlockMethodRecomputesTheFirstLayersOfEachModelChunk) {
  // Megatron-Core's --recompute-method block --recompute-num-layers 1 on two chunks of 4 layers:
  // layers 0 and 4 as under full recompute, the others as without.
  ModelSpec m = load_model(test::shipped("workloads", "llama3-70b"));
  m.layers = 8;
  m.training.global_batch = 8;
  const Cluster c = test::h100_nodes(1);
  HybridPlan p = test::one_stage_plan(8, 8, 1, 8);
  p.pipelines[0].stages[0].chunks = {{0, 3}, {4, 7}};
  p.schedule = PipelineSchedule::kInterleaved;
  p.recompute = RecomputeMode::kFull;
  p.recompute_layers = 1;
  const Device h100 = load_device(test::shipped("kernels_profile/devices", "H100-SXM5-80GB"));
  const StageWorkKey key = stage_work_key(p, 1, p.pipelines[0].stages[0]);
  EXPECT_EQ(key.chunk_starts, (std::vector<int>{0, 4}));
  const std::vector<BlockWork> block = stage_block_work(m, h100, DType::kBf16, CostModel{}, key);
  StageWorkKey every = key, none = key;
  every.recompute_layers = 0;
  every.chunk_starts.clear();
  none = every;
  none.recompute = RecomputeMode::kNone;
  const std::vector<BlockWork> full = stage_block_work(m, h100, DType::kBf16, CostModel{}, every);
  const std::vector<BlockWork> kept = stage_block_work(m, h100, DType::kBf16, CostModel{}, none);
  for (int l = 0; l < 8; ++l) {
    const BlockWork& want = l == 0 || l == 4 ? full[l + 1] : kept[l + 1];
    EXPECT_EQ(block[l + 1].recompute_s, want.recompute_s) << l;
    EXPECT_EQ(block[l + 1].saved_bytes, want.saved_bytes) << l;
  }
  EXPECT_GT(full[1].recompute_s, 0);
  // Blocks of one kind point at the first of it, in this vector.
  EXPECT_EQ(block[2].same_as, -1);  // layer 1: the first not recomputed
  EXPECT_EQ(block[5].same_as, 1);   // layer 4: as layer 0
  EXPECT_NE(p.shape().find("recompute full (first layer of each chunk)"), std::string::npos) << p.shape();
  EXPECT_NE(megatron_args(p, m, c).args.find("--recompute-granularity full --recompute-method block --recompute-num-layers 1"),
            std::string::npos)
      << megatron_args(p, m, c).args << megatron_args(p, m, c).why_not;
  // Plan files carry it, with full recompute only.
  EXPECT_EQ(test::read_edited_plan(p, m, c).plan->recompute_layers, 1);
  const test::EditedPlanRead selective = test::read_edited_plan(p, m, c, "recompute: full", "recompute: selective");
  EXPECT_FALSE(selective.plan) << "recompute_layers beside selective recompute accepted";
  EXPECT_NE(selective.error.find("recompute_layers"), std::string::npos) << selective.error;
  EXPECT_NE(selective.error.find("needs recompute: full"), std::string::npos) << selective.error;
}

TEST(RecomputeLayers, WhereOnlyFullRecomputeFitsItRecomputesTheFewestLayersThatFit) {
  // Llama 3 70B on 64 A100 40GB: plans that fit only with recompute recompute the first few layers
  // of each chunk (Megatron-Core's block method), the fewest that fit: one fewer does not fit, and
  // the plan beats recomputing every layer.
  const ModelSpec m = load_model(test::shipped("workloads", "llama3-70b"));
  const Cluster c = test::shipped_cluster("a100-8x8");
  HybridPlanner planner(m, c, CostModel{}, SimOptions{});
  const HybridSearch s = planner.search(HybridFlavour::kHetsim, HybridOptions{});
  int partial = 0;
  for (const HybridPlan& p : s.leading) {
    if (p.recompute != RecomputeMode::kFull || p.recompute_layers == 0) continue;
    ++partial;
    EXPECT_TRUE(check_hybrid_plan(p, m, c).empty()) << p.shape();
    const HybridEstimate at = planner.estimate(p);
    EXPECT_TRUE(at.fits) << p.shape();
    HybridPlan fewer = p, every = p;
    fewer.recompute_layers -= 1;
    every.recompute_layers = 0;
    if (fewer.recompute_layers > 0) {
      EXPECT_FALSE(planner.estimate(fewer).fits) << p.shape();
    }
    EXPECT_LT(at.time_s, planner.estimate(every).time_s) << p.shape();
  }
  EXPECT_GT(partial, 0);
}

TEST(RecomputeModules, TheRecipesModulesSitBetweenTheAttentionCoreAndWholeLayers) {
  // What the planner tries between selective (the attention core) and full recompute for MoE and
  // latent-attention models: the recipes' modules need less memory than the core alone (flash keeps no
  // score tensor: the core frees nothing) and less time than recomputing whole layers.
  ModelSpec m = deepseek4();
  m.training.global_batch = 4 * 8;
  const Cluster c = test::h100_nodes(1);
  HybridPlan p = test::one_stage_plan(8, 4, 4, 8, 1, 8);
  const auto with = [&](RecomputeMode mode, RecomputeModules modules) {
    HybridPlan q = p;
    q.recompute = mode;
    q.recompute_modules = modules;
    EXPECT_TRUE(check_hybrid_plan(q, m, c).empty());
    return HybridPlanner(m, c, CostModel{}, SimOptions{}).estimate(q);
  };
  const HybridEstimate core = with(RecomputeMode::kSelective, kDefaultRecomputeModules);
  const HybridEstimate recipes = with(RecomputeMode::kSelective, kDefaultRecomputeModules | module_bit("layernorm") |
                                                                     module_bit("moe_act") | module_bit("mla_up_proj"));
  const HybridEstimate full = with(RecomputeMode::kFull, kDefaultRecomputeModules);
  EXPECT_LT(recipes.worst_memory_ratio, core.worst_memory_ratio);
  EXPECT_GT(recipes.worst_memory_ratio, full.worst_memory_ratio);
  EXPECT_GT(recipes.time_s, core.time_s);
  EXPECT_LT(recipes.time_s, full.time_s);
}

}  // namespace
}  // namespace hetsim
