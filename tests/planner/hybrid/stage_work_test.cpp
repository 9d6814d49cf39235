// File: tests/planner/hybrid/stage_work_test.cpp
// One GPU's share of a transformer layer under Megatron TP: activation bytes against the formulas
// of Korthikanti et al. 2022 (arXiv 2205.05198), Section 4 / Table 2, computed independently here.
#include "planner/hybrid/stage_work.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "test_support.hpp"

namespace hetsim {
namespace {

// The paper's setting: GPT layer, ffn = 4h, fp16, dropout on, unfused attention.
ModelSpec paper_layer(long s, long h, long a) {
  ModelSpec m;
  m.name = "paper";
  m.family = Family::kGpt;
  m.layers = 2;
  m.hidden = h;
  m.heads = a;
  m.kv_heads = a;
  m.ffn_hidden = 4 * h;
  m.seq_len = s;
  m.vocab = 1024;
  m.training = {8, 1, DType::kFp16, std::nullopt, Optimizer::kAdam, Recompute::kNone, AttentionKernel::kStandard, 0.1, 0};
  return m;
}

struct Case { long s, b, h, a; int t; };
const Case kCases[] = {{2048, 4, 6144, 64, 8}, {1024, 2, 2048, 16, 4}, {512, 1, 1024, 16, 2}, {2048, 1, 12288, 96, 8},
                       {128, 8, 768, 12, 1}};

double layer_bytes(const Case& c, RecomputeMode r, bool sp, bool flash = false) {
  ModelSpec m = paper_layer(c.s, c.h, c.a);
  if (flash) m.training.attention = AttentionKernel::kFlash;
  const Device a100 = load_device(test::shipped("kernels_profile/devices", "A100-SXM4-80GB"));
  const std::vector<BlockWork> w =
      stage_block_work(m, a100, DType::kFp16, CostModel{}, {c.b, c.t, sp, r, StageProgram::kMegatron});
  return w[1].saved_bytes;
}

TEST(StageWork, ActivationsMatchKorthikantiTable2) {
  for (const Case& c : kCases) {
    const double s = c.s, b = c.b, h = c.h, a = c.a, t = c.t, sbh = s * b * h;
    // Tensor parallel: sbh(10 + 24/t + 5as/(ht)); with sequence parallelism sbh/t (34 + 5as/h).
    EXPECT_NEAR(layer_bytes(c, RecomputeMode::kNone, false) / (sbh * (10 + 24 / t + 5 * a * s / (h * t))), 1, 1e-12) << c.h;
    EXPECT_NEAR(layer_bytes(c, RecomputeMode::kNone, true) / (sbh / t * (34 + 5 * a * s / h)), 1, 1e-12) << c.h;
    // Selective recompute drops the 5as^2b term: sbh(10 + 24/t), and 34 sbh / t with SP.
    EXPECT_NEAR(layer_bytes(c, RecomputeMode::kSelective, false) / (sbh * (10 + 24 / t)), 1, 1e-12) << c.h;
    EXPECT_NEAR(layer_bytes(c, RecomputeMode::kSelective, true) / (sbh * 34 / t), 1, 1e-12) << c.h;
    // Full recompute keeps the layer input: 2sbh (its sequence shard under SP).
    EXPECT_NEAR(layer_bytes(c, RecomputeMode::kFull, false) / (2 * sbh), 1, 1e-12) << c.h;
    EXPECT_NEAR(layer_bytes(c, RecomputeMode::kFull, true) / (2 * sbh / t), 1, 1e-12) << c.h;
  }
}

TEST(StageWork, FlashAttentionDropsTheScoreTerm) {
  for (const Case& c : kCases) {
    const double s = c.s, b = c.b, h = c.h, a = c.a, t = c.t, sbh = s * b * h;
    // sbh(10 + 24/t) plus the kernel's fp32 row log-sum-exp, 4·a·s·b/t bytes.
    EXPECT_NEAR(layer_bytes(c, RecomputeMode::kNone, false, true) / (sbh * (10 + 24 / t) + 4 * a * s * b / t), 1, 1e-12);
  }
}

TEST(StageWork, FullRecomputeReissuesTheForwardCollectives) {
  const ModelSpec m = paper_layer(1024, 2048, 16);
  const Device a100 = load_device(test::shipped("kernels_profile/devices", "A100-SXM4-80GB"));
  const std::vector<BlockWork> full =
      stage_block_work(m, a100, DType::kFp16, CostModel{}, {2, 4, false, RecomputeMode::kFull, StageProgram::kMegatron});
  const std::vector<BlockWork> sel =
      stage_block_work(m, a100, DType::kFp16, CostModel{}, {2, 4, false, RecomputeMode::kSelective, StageProgram::kMegatron});
  // Two all-reduces of the layer output (after attention and after the MLP): 2 x s·b·h·2 bytes.
  EXPECT_DOUBLE_EQ(full[1].recompute_tp.all_reduce, 2 * 1024.0 * 2 * 2048 * 2);
  EXPECT_FALSE(sel[1].recompute_tp.any());  // the attention core has no collective
  EXPECT_GT(full[1].recompute_s, sel[1].recompute_s);
}

TEST(StageWork, SequenceParallelRegathersColumnInputsAndShardsNorms) {
  const ModelSpec m = paper_layer(1024, 2048, 16);
  const Device a100 = load_device(test::shipped("kernels_profile/devices", "A100-SXM4-80GB"));
  const std::vector<BlockWork> tp =
      stage_block_work(m, a100, DType::kFp16, CostModel{}, {2, 4, false, RecomputeMode::kNone, StageProgram::kMegatron});
  const std::vector<BlockWork> sp =
      stage_block_work(m, a100, DType::kFp16, CostModel{}, {2, 4, true, RecomputeMode::kNone, StageProgram::kMegatron});
  TpBytes bwd_tp, bwd_sp;
  for (const WorkPart& p : tp[1].parts) bwd_tp += p.tp_bwd;
  for (const WorkPart& p : sp[1].parts) bwd_sp += p.tp_bwd;
  // QKV and MLP-up gather their sequence-split input again for the weight gradient.
  EXPECT_DOUBLE_EQ(bwd_sp.all_gather - bwd_tp.all_gather, 2 * 1024.0 * 2 * 2048 * 2);
  EXPECT_LT(sp[1].fwd_s(), tp[1].fwd_s());  // norms and dropout-add on a quarter of the tokens
}

TEST(StageWork, ColumnLayersOfferTheirWeightGradientToTheBackwardCollective) {
  const ModelSpec m = paper_layer(1024, 2048, 16);
  const Device a100 = load_device(test::shipped("kernels_profile/devices", "A100-SXM4-80GB"));
  for (bool sp : {false, true}) {
    const std::vector<BlockWork> w =
        stage_block_work(m, a100, DType::kFp16, CostModel{}, {2, 4, sp, RecomputeMode::kNone, StageProgram::kMegatron});
    double hidden = 0, weight = 0;
    for (const WorkPart& p : w[1].parts) {
      hidden += p.bwd_overlap_s;
      weight += p.bwd_weight_s;
      if (!p.tp_bwd.any()) {
        EXPECT_EQ(p.bwd_overlap_s, 0);
      }
    }
    // QKV and MLP-up: their weight gradient (and under SP their input gradient too, for the
    // re-gather); never more than the whole backward.
    EXPECT_GT(hidden, 0);
    if (sp) EXPECT_GT(hidden, weight * 0.5);
    else EXPECT_LT(hidden, weight);
  }
  EXPECT_EQ(stage_block_work(m, a100, DType::kFp16, CostModel{}, {2, 1, false, RecomputeMode::kNone, StageProgram::kMegatron})[1]
                .parts[0].bwd_overlap_s, 0);
}

TEST(StageWork, WithoutVocabParallelLossTheLogitsAreGathered) {
  const ModelSpec m = paper_layer(1024, 2048, 16);
  const Device a100 = load_device(test::shipped("kernels_profile/devices", "A100-SXM4-80GB"));
  StageWorkKey key{2, 4, false, RecomputeMode::kNone, StageProgram::kMegatron};
  const BlockWork vp = stage_block_work(m, a100, DType::kFp16, CostModel{}, key).back();
  key.vocab_parallel = false;
  const BlockWork gathered = stage_block_work(m, a100, DType::kFp16, CostModel{}, key).back();
  TpBytes vp_fwd, g_fwd;
  for (const WorkPart& p : vp.parts) vp_fwd += p.tp_fwd;
  for (const WorkPart& p : gathered.parts) g_fwd += p.tp_fwd;
  // All-gather of the logits: s·b tokens x vocabulary x 2 bytes; no max/sum exchange of the
  // vocabulary-parallel loss.
  EXPECT_DOUBLE_EQ(g_fwd.all_gather - vp_fwd.all_gather, 1024.0 * 2 * 1024 * 2);
  EXPECT_GT(vp_fwd.all_reduce, g_fwd.all_reduce);
  EXPECT_GT(gathered.fwd_s(), vp.fwd_s());  // every GPU computes the whole loss
}

TEST(StageWork, MoeAndLatentAttentionSplitLikeMegatronCore) {
  // DeepSeek-V3's MoE layer under TP: the shared expert and MLA's up-projections split like the
  // dense MLP and qkv (column, then row for the output projections); the routed experts stay whole
  // on every GPU of the group (expert parallelism divides them), and so do q_down, kv_down and the
  // latent norms, even under sequence parallelism; the router and the permutations work on the
  // GPU's own 1/tp of the sequence under sequence parallelism, on all of it without.
  const ModelSpec m = load_model(test::shipped("workloads", "deepseek-v3"));
  const OpGraph g = build_op_graph(m, 1, DType::kBf16);
  const std::vector<std::pair<std::string, TpSplit>> expect{
      {"layer3.q_down", TpSplit::kReplicated},       {"layer3.q_norm", TpSplit::kReplicated},
      {"layer3.q_up", TpSplit::kColumn},             {"layer3.kv_down", TpSplit::kReplicated},
      {"layer3.kv_norm", TpSplit::kReplicated},      {"layer3.kv_up", TpSplit::kColumn},
      {"layer3.attn_out", TpSplit::kRow},            {"layer3.router", TpSplit::kSequence},
      {"layer3.router_topk", TpSplit::kSequence},    {"layer3.moe_permute", TpSplit::kSequence},
      {"layer3.expert_fc1", TpSplit::kReplicated},   {"layer3.expert_act", TpSplit::kReplicated},
      {"layer3.expert_fc2", TpSplit::kReplicated},   {"layer3.moe_unpermute", TpSplit::kSequence},
      {"layer3.shared_fc1", TpSplit::kColumn},       {"layer3.shared_act", TpSplit::kSharded},
      {"layer3.shared_fc2", TpSplit::kRow},          {"layer3.mlp_norm", TpSplit::kSharded}};
  for (const auto& [name, split] : expect) {
    const std::string& wanted = name;  // clang before 16 cannot capture a structured binding
    const auto it = std::find_if(g.ops.begin(), g.ops.end(), [&](const Op& op) { return op.name == wanted; });
    ASSERT_NE(it, g.ops.end()) << name;
    EXPECT_EQ(megatron_split(*it, true), split) << name;
    if (split == TpSplit::kSequence) {
      EXPECT_EQ(megatron_split(*it, false), TpSplit::kReplicated) << name;
    }
  }
}

TEST(StageWork, MoeRoutingUnderSequenceParallelismTakesItsShareOfTheTokens) {
  // Qwen3-30B-A3B's first layer, micro-batch 1: at tp 2 with sequence parallelism every operator of
  // the layer keeps half of what it keeps at tp 1: attention by heads, norms and residuals by
  // sequence, the experts half the routed rows, and the router and the permutations the GPU's own
  // 2048 of the 4096 tokens (they kept all 4096 on both GPUs before: the router's input and the
  // routing probabilities and choices, 2048 x (2048 x 2 + 128 x 2 + 8 x 4) bytes more).
  const ModelSpec m = load_model(test::shipped("workloads", "qwen3-30b-a3b"));
  const Device h100 = load_device(test::shipped("kernels_profile/devices", "H100-SXM5-80GB"));
  const auto saved = [&](int tp, bool sp) {
    return stage_block_work(m, h100, DType::kBf16, CostModel{}, {1, tp, sp, RecomputeMode::kNone, StageProgram::kMegatron})[1]
        .saved_bytes;
  };
  EXPECT_DOUBLE_EQ(saved(2, true), saved(1, false) / 2);
}

TEST(StageWork, ColumnSplitLayersSumTheGradientOfTheirOwnInputWidth) {
  // DeepSeek-V3's dense layer 0 at tp 8, micro-batch 1 (T = 4096 tokens, bf16): the backward
  // all-reduces of its column-split layers carry their inputs' gradients: q_up reads the 1536-wide
  // q latent, kv_up the 512-wide kv latent, the MLP's gate/up the 7168-wide hidden state:
  // T x 2 x (1536 + 512 + 7168) bytes, not three hidden states.
  const ModelSpec m = load_model(test::shipped("workloads", "deepseek-v3"));
  const Device h100 = load_device(test::shipped("kernels_profile/devices", "H100-SXM5-80GB"));
  const std::vector<BlockWork> w =
      stage_block_work(m, h100, DType::kBf16, CostModel{}, {1, 8, false, RecomputeMode::kNone, StageProgram::kMegatron});
  double all_reduce = 0;
  for (const WorkPart& p : w[1].parts) all_reduce += p.tp_bwd.all_reduce;
  EXPECT_DOUBLE_EQ(all_reduce, 4096.0 * 2 * (1536 + 512 + 7168));
}

}  // namespace
}  // namespace hetsim

namespace hetsim {
namespace {

TEST(StageWork, ADataSplitLinearLayerRunsItsShareOfTheRows) {
  // Stage synthesis may split a layer's every operator by data (TpSplit::kSharded): each of tp ranks
  // then runs 1/tp of every product's rows, its GEMM shape and PyTorch's eager kernels included, not
  // the whole product (the shape was left whole: a linear layer's product has no batch to split).
  ModelSpec m = paper_layer(2048, 6144, 64);
  m.training.kernels = TrainingKernels::kEager;
  const Device a100 = load_device(test::shipped("kernels_profile/devices", "A100-SXM4-80GB"));
  const OpGraph g = build_op_graph(m, 4, DType::kFp16);
  LayerProgram data;
  for (const Op& op : g.ops) {
    if (op.layer == 0) data.ops.push_back({TpSplit::kSharded, {}, {}, {}, {}, {}});
  }
  const auto layer_s = [&](int tp) {
    const std::vector<BlockWork> w = stage_block_work(m, a100, DType::kFp16, CostModel{}, {4, tp, false, RecomputeMode::kNone, StageProgram::kMegatron}, data);
    return std::pair{w[1].fwd_s(), w[1].bwd_s()};
  };
  const auto [fwd1, bwd1] = layer_s(1);
  const auto [fwd4, bwd4] = layer_s(4);
  EXPECT_NEAR(fwd4 / fwd1, 0.25, 0.01);  // a quarter, but for each kernel's launch
  // Backward: the input gradient's rows split as the forward's; the weight gradient's K is the rows,
  // a quarter as deep, so its tiles' fixed cost (the device's k_half) weighs more: a little over a
  // quarter, and far from the whole product.
  EXPECT_GT(bwd4 / bwd1, 0.25);
  EXPECT_LT(bwd4 / bwd1, 0.25 * 1.1);
}

}  // namespace
}  // namespace hetsim
