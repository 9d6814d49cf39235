// File: tests/planner/spmd/mixed_attention_test.cpp
// One SPMD program on GPU types with and without a fused attention kernel (A100 beside V100): one
// operator graph, each type costed with its own attention kernel (planner/spmd/spmd_problem.hpp).
// A new user found the best SPMD program, data parallel with speed-proportional shares, 18 %
// slower than the dp-proportional baseline on the default cluster, because every GPU took the
// V100's unfused path (audit of 2026-12-04).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "base/temp_dir.hpp"
#include "planner/spmd/spmd_problem.hpp"
#include "test_support.hpp"

namespace hetsim {
namespace {

const SpmdOp* find_op(const SpmdProblem& p, const std::string& name) {
  const auto it = std::find_if(p.ops.begin(), p.ops.end(), [&](const SpmdOp& op) { return op.name == name; });
  return it == p.ops.end() ? nullptr : &*it;
}

TEST(SpmdMixedAttention, EachGpuTypeRunsItsOwnAttentionKernelInOneGraph) {
  const ModelSpec m = load_model(test::shipped("workloads", "gpt3-1.3b"));
  const Cluster c = test::shipped_cluster("a100-v100-2x2");  // node type 0: A100 (fused kernel), 1: V100 (none)
  ASSERT_TRUE(c.node_types[0].gpu.flash_attention);
  ASSERT_FALSE(c.node_types[1].gpu.flash_attention);
  const SpmdProblem own = build_spmd_problem(m, c, CostModel{});
  const SpmdProblem unfused = build_spmd_problem(m, c, CostModel{}, MixedAttention::kUnfusedEverywhere);
  // One graph, the fused one: a layer's attention core is one operator instead of four.
  const SpmdOp* core = find_op(own, "layer0.attention");
  ASSERT_NE(core, nullptr);
  EXPECT_EQ(find_op(own, "layer0.attn_scores"), nullptr);
  EXPECT_EQ(own.ops.size() + 3 * static_cast<size_t>(m.layers), unfused.ops.size());
  // The V100 runs the unfused core: its time and saved activations are those of the four operators.
  double v100_s = 0, v100_bwd_s = 0, v100_saved = 0, a100_unfused_s = 0;
  for (const char* part : {"attn_scores", "softmax", "attn_dropout", "attn_context"}) {
    const SpmdOp* op = find_op(unfused, std::string("layer0.") + part);
    ASSERT_NE(op, nullptr) << part;
    v100_s += op->time_s[1];
    v100_bwd_s += op->bwd_s[1];
    v100_saved += op->saved_bytes[1];
    a100_unfused_s += op->time_s[0];
  }
  EXPECT_NEAR(core->time_s[1], v100_s, 1e-12 * v100_s);
  EXPECT_NEAR(core->bwd_s[1], v100_bwd_s, 1e-12 * v100_bwd_s);
  EXPECT_NEAR(core->saved_bytes[1], v100_saved, 1e-9 * v100_saved);
  // The A100 runs the fused kernel: faster, and it keeps no scores.
  EXPECT_LT(core->time_s[0], 0.8 * a100_unfused_s);
  EXPECT_LT(core->saved_bytes[0], 0.5 * core->saved_bytes[1]);
  // Every other operator costs what it did.
  for (const SpmdOp& op : own.ops) {
    if (op.name == "layer0.attention" || op.kind == OpKind::kFlashAttention) continue;
    const SpmdOp* before = find_op(unfused, op.name);
    ASSERT_NE(before, nullptr) << op.name;
    EXPECT_EQ(op.time_s, before->time_s) << op.name;
    EXPECT_EQ(op.saved_bytes, before->saved_bytes) << op.name;
  }
}

TEST(SpmdMixedAttention, OneKernelForEveryGpuLeavesTheProblemAsItWas) {
  // All GPU types with the fused kernel (A100 + MI250X), or the model asks for the unfused path:
  // the problem is the one graph every type runs, whichever way it is built.
  const ModelSpec m = load_model(test::shipped("workloads", "gpt3-1.3b"));
  const Cluster both = test::shipped_cluster("a100-mi250x");
  EXPECT_EQ(build_spmd_problem(m, both, CostModel{}).ops.size(),
            build_spmd_problem(m, both, CostModel{}, MixedAttention::kUnfusedEverywhere).ops.size());
  ModelSpec standard = m;
  standard.training.attention = AttentionKernel::kStandard;
  const Cluster mixed = test::shipped_cluster("a100-v100-2x2");
  const SpmdProblem a = build_spmd_problem(standard, mixed, CostModel{});
  const SpmdProblem b = build_spmd_problem(standard, mixed, CostModel{}, MixedAttention::kUnfusedEverywhere);
  ASSERT_EQ(a.ops.size(), b.ops.size());
  for (size_t i = 0; i < a.ops.size(); ++i) EXPECT_EQ(a.ops[i].time_s, b.ops[i].time_s) << a.ops[i].name;
}

TEST(SpmdMixedAttention, TheBestSpmdProgramNoLongerTrailsTheDataParallelBaselineOnTheDefaultCluster) {
  // `hetsim plan --no-pipeline` on the default cluster: hetsim's chosen SPMD program (data parallel
  // with speed-proportional shares) simulated 3.34 s against dp-proportional's 2.825 s when every
  // GPU ran the unfused attention; 2.626 s against 2.825 s with the per-type kernels (2.52 s against
  // 2.719 s since the DGX-1 channel rings spread over the whole NVLink mesh).
  const TempDir tmp("mixed-attention");
  const std::filesystem::path report = tmp.path() / "plan.json";
  const test::CliRun r = test::run_hetsim("plan --no-pipeline --no-upper-bound --report " + report.string(), test::Capture::kStdout);
  ASSERT_EQ(r.rc, 0) << r.output;
  std::ifstream in(report);
  const nlohmann::json j = nlohmann::json::parse(in);
  const double chosen = j["iteration_time_s"];
  double baseline = 0;
  for (const nlohmann::json& b : j["baselines"]) {
    if (b["strategy"] == "dp-proportional") baseline = b["simulated_s"];
  }
  ASSERT_GT(chosen, 0);
  ASSERT_GT(baseline, 0);
  EXPECT_LT(chosen, baseline);
}

TEST(SpmdMixedAttention, APlanWrittenWithEveryGpuOnTheUnfusedPathIsReadAsWrittenAndSaidSo) {
  // SPMD plans hetsim wrote for this cluster before 2026-12-04 name the unfused operators: read
  // against the problem they were written for, simulated, and the run says so.
  const std::string plan = (test::source_dir() / "tests/fuzz/seeds/plan/gpt3-1.3b-a100-v100-2x2.yaml").string();
  const test::CliRun r = test::run_shell(test::hetsim_binary() + " simulate --no-upper-bound --plan " + plan + " 2>&1");
  EXPECT_EQ(r.rc, 0) << r.output;
  EXPECT_NE(r.output.find("its operators are those of every GPU on the unfused attention path"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("iteration time: "), std::string::npos) << r.output;
}

TEST(SpmdMixedAttention, APlanFileWithALongNameIsRefusedNotACrash) {
  // Which problem a plan names is read from its `name:` values; a regex over the file's text once
  // recursed a frame a character and overflowed the stack on a name of 50 000 characters.
  const TempDir tmp("mixed-attention");
  const std::filesystem::path plan = tmp.new_file("long-name", ".yaml", "name: " + std::string(60000, 'a') + "\n");
  const test::CliRun r = test::run_shell(test::hetsim_binary() + " -q simulate --no-upper-bound --plan " + plan.string() + " 2>&1");
  EXPECT_EQ(r.rc, 2) << r.output;
  EXPECT_NE(r.output.find("long-name"), std::string::npos) << r.output.substr(0, 2000);
}

}  // namespace
}  // namespace hetsim
