// File: tests/studies/megatron_args_test.cpp
// hetsim plan --emit megatron-args: a plan of one shape comes back as the Megatron-LM arguments it
// was made from. Every published Megatron run of the calibration set (its grid turned into a plan
// as `validate` does) round-trips; plans Megatron cannot run say why.
#include "planner/hybrid/megatron_args.hpp"

#include <gtest/gtest.h>

#include <map>
#include <sstream>

#include "base/data_dir.hpp"
#include "studies/validation/megatron_grid.hpp"
#include "test_support.hpp"

namespace hetsim {
namespace {

// "--a 1 --b --c x" -> {a: "1", b: "", c: "x"}.
std::map<std::string, std::string> parse(const std::string& args) {
  std::map<std::string, std::string> out;
  std::istringstream in(args);
  std::string word, key;
  while (in >> word) {
    if (word.rfind("--", 0) == 0) {
      key = word.substr(2);
      out[key] = "";
    } else {
      out[key] += (out[key].empty() ? "" : " ") + word;
    }
  }
  return out;
}

long number(const std::map<std::string, std::string>& a, const std::string& key, long absent) {
  const auto it = a.find(key);
  return it == a.end() ? absent : std::stol(it->second);
}

TEST(MegatronArgs, EveryPublishedMegatronGridRoundTrips) {
  int checked = 0;
  for (const auto& file : files_with_extension(test::source_dir() / "studies" / "validation", ".yaml")) {
    for (const ValidationRun& run : load_runs(file)) {
      if (run.kind != RunKind::kTraining || !run.training.megatron) continue;
      SCOPED_TRACE(run.name);
      ModelSpec m = load_model(run.training.model);
      if (run.training.global_batch > 0) m.training.global_batch = run.training.global_batch;
      Cluster c = load_cluster(run.cluster);
      if (run.nodes > 0) {
        c.node_types.front().count = run.nodes;
        index_gpus(c);
      }
      const MegatronGrid& g = *run.training.megatron;
      const HybridPlan plan = megatron_plan(g, m, c, run.where);
      const MegatronArgs out = megatron_args(plan, m, c);
      ASSERT_FALSE(out.args.empty()) << out.why_not;
      const auto a = parse(out.args);
      EXPECT_EQ(number(a, "tensor-model-parallel-size", 0), g.tp) << out.args;
      EXPECT_EQ(number(a, "pipeline-model-parallel-size", 0), g.pp) << out.args;
      EXPECT_EQ(number(a, "context-parallel-size", 1), g.cp) << out.args;
      EXPECT_EQ(number(a, "expert-model-parallel-size", 1), g.ep) << out.args;
      EXPECT_EQ(number(a, "micro-batch-size", 0), g.micro_batch) << out.args;
      EXPECT_EQ(number(a, "global-batch-size", 0), m.training.global_batch) << out.args;
      // The chunks per stage: said, or counted in the layout or a hybrid model's pattern (its virtual
      // stages over pp).
      long chunks = number(a, "num-virtual-stages-per-pipeline-rank", 1);
      if (!m.hybrid_pattern.empty()) {  // the pattern gives the layers and stages; no --num-layers
        const std::string pattern = a.at("hybrid-layer-pattern");
        EXPECT_EQ(a.count("num-layers"), 0u) << out.args;
        EXPECT_EQ(pattern, "\"" + m.hybrid_pattern + "\"") << "one stage, no MTP: the model's own pattern";
        chunks = static_cast<long>(std::count(pattern.begin(), pattern.end(), '|') + 1) / g.pp;
      } else {
        EXPECT_EQ(number(a, "num-layers", 0), m.layers) << out.args;
      }
      if (a.count("pipeline-model-parallel-layout")) {
        const std::string layout = a.at("pipeline-model-parallel-layout");
        chunks = static_cast<long>(std::count(layout.begin(), layout.end(), '|') + 1) / g.pp;
        EXPECT_EQ(std::count(layout.begin(), layout.end(), 't'), m.layers) << layout;
        EXPECT_TRUE(g.embedding_in_split || g.loss_in_split) << "a layout for equal chunks: " << layout;
      }
      EXPECT_EQ(chunks, g.chunks) << out.args;
      EXPECT_EQ(a.count("sequence-parallel"), g.sequence_parallel ? 1u : 0u) << out.args;
      EXPECT_EQ(a.count("use-distributed-optimizer"), g.gradient_sync == GradientSync::kZero1 ? 1u : 0u) << out.args;
      EXPECT_EQ(a.count("use-torch-fsdp2"), g.gradient_sync == GradientSync::kZero3 ? 1u : 0u) << out.args;
      EXPECT_EQ(a.count("overlap-param-gather"), g.overlap_param_gather ? 1u : 0u) << out.args;
      EXPECT_EQ(a.count("tp-comm-overlap"), g.tp_comm_userbuffers ? 1u : 0u) << out.args;
      EXPECT_EQ(a.count("overlap-moe-expert-parallel-comm"), g.overlap_moe_expert_parallel_comm ? 1u : 0u) << out.args;
      ++checked;
    }
  }
  EXPECT_GE(checked, 20);  // the Megatron-LM A100 grids and the Megatron-Bridge H100/B200 rows
}

TEST(MegatronArgs, UnevenStagesAreWrittenAsALayout) {
  // llama2-7b (32 layers) on 16 H100, 1F1B over 2 stages of 8 GPUs (tp 4, 2 copies): 15 layers and
  // the embedding, then 17 and the loss.
  const ModelSpec m = load_model(test::shipped("workloads", "llama2-7b"));
  const Cluster c = test::fixture_cluster("dgx-h100-16");
  HybridPlan p;
  p.micro_batch = 4;
  PipelinePlan pl;
  pl.micro_batches = 8;
  for (int s = 0; s < 2; ++s) {
    StagePlan st;
    st.tp = 4;
    for (int d = 0; d < 8; ++d) st.devices.push_back(8 * s + d);
    st.chunks = {s == 0 ? LayerRange{0, 14} : LayerRange{15, 31}};
    pl.stages.push_back(st);
  }
  p.pipelines = {pl};
  const MegatronArgs out = megatron_args(p, m, c);
  ASSERT_FALSE(out.args.empty()) << out.why_not;
  const auto a = parse(out.args);
  EXPECT_EQ(a.at("pipeline-model-parallel-layout"), "\"E" + std::string(15, 't') + "|" + std::string(17, 't') + "L\"");
  EXPECT_EQ(number(a, "micro-batch-size", 0), 2);  // 4 samples over a stage's 2 copies
  EXPECT_EQ(number(a, "global-batch-size", 0), 32);
  // What Megatron cannot run is said, not guessed.
  HybridPlan gpipe = p;
  gpipe.schedule = PipelineSchedule::kGpipe;
  EXPECT_NE(megatron_args(gpipe, m, c).why_not.find("no gpipe schedule"), std::string::npos);
  HybridPlan wide = p;
  wide.pipelines[0].stages[1].tp = 8;
  EXPECT_NE(megatron_args(wide, m, c).why_not.find("different tp"), std::string::npos);
  // A plan chosen on PyTorch's eager kernels is not what Megatron's fused ones would run.
  ModelSpec eager = m;
  eager.training.kernels = TrainingKernels::kEager;
  EXPECT_NE(megatron_args(p, eager, c).why_not.find("training.kernels: eager"), std::string::npos);
  const Cluster mixed = test::shipped_cluster("a100-v100-2x2");
  HybridPlan across = p;
  for (int d = 0; d < 8; ++d) across.pipelines[0].stages[1].devices[d] = 16 + d;  // the V100 nodes
  EXPECT_NE(megatron_args(across, m, mixed).why_not.find("2 GPU types"), std::string::npos);
}

// A plan of `stages` pipeline stages of 8 GPUs each (tp 8), the chunks given per stage.
HybridPlan plan_of(const std::vector<std::vector<LayerRange>>& stages) {
  HybridPlan p;
  p.micro_batch = 1;
  p.schedule = stages.front().size() > 1 ? PipelineSchedule::kInterleaved : PipelineSchedule::kOneFOneB;
  PipelinePlan pl;
  pl.micro_batches = 8;
  for (size_t s = 0; s < stages.size(); ++s) {
    StagePlan st;
    st.tp = 8;
    for (int d = 0; d < 8; ++d) st.devices.push_back(static_cast<int>(8 * s) + d);
    st.chunks = stages[s];
    pl.stages.push_back(st);
  }
  p.pipelines = {pl};
  return p;
}

TEST(MegatronArgs, MultiTokenPredictionAndHybridPatternsAreWrittenAsMegatronCoreReadsThem) {
  const Cluster c = test::fixture_cluster("dgx-h100-16");
  // A llama of 6 decoder layers and 2 MTP layers over 2 stages: --num-layers counts the decoder's,
  // the layout marks the MTP layers `m` (in the last virtual stage, as Megatron-Core requires).
  ModelSpec m = load_model(test::shipped("workloads", "llama2-7b"));
  m.layers = 8;
  m.mtp_layers = 2;
  const MegatronArgs mtp = megatron_args(plan_of({{LayerRange{0, 3}}, {LayerRange{4, 7}}}), m, c);
  ASSERT_FALSE(mtp.args.empty()) << mtp.why_not;
  auto a = parse(mtp.args);
  EXPECT_EQ(number(a, "num-layers", 0), 6);
  EXPECT_EQ(number(a, "mtp-num-layers", 0), 2);
  EXPECT_EQ(a.at("pipeline-model-parallel-layout"), "\"Etttt|ttmmL\"");
  EXPECT_EQ(a.count("mtp-use-repeated-layer"), 0u);
  // (Those stages are equal, and still get a layout: Megatron's even split of the decoder's 6 layers
  // would not place them so.) MTP layers over two virtual stages: said, not written.
  const MegatronArgs early = megatron_args(plan_of({{LayerRange{0, 1}, LayerRange{4, 6}}, {LayerRange{2, 3}, LayerRange{7, 7}}}), m, c);
  EXPECT_TRUE(early.args.empty());
  EXPECT_NE(early.why_not.find("multi-token prediction layers are not all in one virtual stage"), std::string::npos) << early.why_not;
  // Nemotron 3 Super (88 decoder layers, two shared "*E" MTP depths) over 2 stages of 2 chunks: the
  // pattern with | between the four virtual stages and /*E/*E after, no --num-layers, no layout.
  const ModelSpec super = load_model(test::source_dir() / "studies/validation/models/nemotron-3-super-mxfp8.yaml");
  ASSERT_EQ(super.layers, 92);
  const MegatronArgs hybrid =
      megatron_args(plan_of({{LayerRange{0, 21}, LayerRange{44, 65}}, {LayerRange{22, 43}, LayerRange{66, 91}}}), super, c);
  ASSERT_FALSE(hybrid.args.empty()) << hybrid.why_not;
  a = parse(hybrid.args);
  const std::string& hp = super.hybrid_pattern;
  EXPECT_EQ(a.at("hybrid-layer-pattern"),
            "\"" + hp.substr(0, 22) + "|" + hp.substr(22, 22) + "|" + hp.substr(44, 22) + "|" + hp.substr(66, 22) + "/*E/*E\"");
  EXPECT_EQ(a.count("num-layers"), 0u);
  EXPECT_EQ(a.count("pipeline-model-parallel-layout"), 0u);
  EXPECT_EQ(a.count("num-virtual-stages-per-pipeline-rank"), 0u);
  EXPECT_EQ(number(a, "mtp-num-layers", 0), 2);
  EXPECT_EQ(a.count("mtp-use-repeated-layer"), 1u);
  // A stage of the loss alone has no layers, which the pattern cannot say.
  HybridPlan loss_alone = plan_of({{LayerRange{0, 91}}, {LayerRange{0, 91}}});
  loss_alone.pipelines[0].stages[1].chunks = {LayerRange::loss()};
  const MegatronArgs refused = megatron_args(loss_alone, super, c);
  EXPECT_NE(refused.why_not.find("--hybrid-layer-pattern cannot say"), std::string::npos) << refused.why_not;
}

TEST(MegatronArgs, PlanPrintsThemOrSaysWhyNot) {
  const test::CliRun one = test::run_hetsim("plan --cluster a100-8x8 --model gpt3-1.3b --global-batch 128 --no-upper-bound "
                                            "--no-spmd --emit megatron-args", test::Capture::kStdout);
  ASSERT_EQ(one.rc, 0) << one.output;
  EXPECT_NE(one.output.find("megatron-lm arguments of the chosen plan: \n  --tensor-model-parallel-size "), std::string::npos)
      << one.output;
  EXPECT_NE(one.output.find("--global-batch-size 128"), std::string::npos) << one.output;
  const test::CliRun mixed = test::run_hetsim("plan --no-upper-bound --no-spmd --emit megatron-args", test::Capture::kStdout);
  ASSERT_EQ(mixed.rc, 0) << mixed.output;
  EXPECT_NE(mixed.output.find("megatron-lm arguments of the chosen plan: none: it runs on 2 GPU types"), std::string::npos)
      << mixed.output;
}

}  // namespace
}  // namespace hetsim
