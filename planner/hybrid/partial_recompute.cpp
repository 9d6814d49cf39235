// File: planner/hybrid/partial_recompute.cpp
#include "planner/hybrid/partial_recompute.hpp"

#include <algorithm>
#include <iterator>
#include <string>
#include <string_view>

namespace hetsim {

std::vector<PlanProblem> recompute_problems(const HybridPlan& plan, const ModelSpec& model) {
  std::vector<PlanProblem> out;
  const RecomputeModules m = plan.recompute_modules;
  if (plan.recompute == RecomputeMode::kSelective && m != kDefaultRecomputeModules) {
    const auto needs = [&](RecomputeModule module, bool present, const std::string& what) {
      if (!has_module(m, module) || present) return;
      out.push_back({"recompute_modules", recompute_modules_text(static_cast<unsigned>(module)) + " recomputes " + what});
    };
    const bool pre_norm = model.family == Family::kGpt || model.family == Family::kLlama;
    if ((m & ~kDefaultRecomputeModules) != 0 && !pre_norm) {
      out.push_back({"recompute_modules", "Megatron-Core's modules other than core_attn are parts of its pre-norm layers (families "
                                          "gpt and llama); this model's family is " + std::string(family_name(model.family))});
    }
    needs(RecomputeModule::kMoeAct, model.moe.has_value(), "the experts' activation; the model has no moe: block");
    needs(RecomputeModule::kMlaUpProj, model.mla.has_value(),
          "multi-head latent attention's up projections; the model has no mla: block");
    needs(RecomputeModule::kMoe, !plan.overlap_moe_expert_parallel_comm,
          "the MoE layer with its all-to-alls, which overlap_moe_expert_parallel_comm pairs with another micro-batch's "
          "(Megatron-Core refuses the two together)");
  }
  if (plan.recompute == RecomputeMode::kFull && plan.recompute_layers > 0) {
    // More than the largest chunk holds recomputes every layer, as recompute: full alone does:
    // the number says something the plan does not do (activation_offload_layers is bounded alike).
    int largest = 0;
    for (const PipelinePlan& pp : plan.pipelines) {
      for (const StagePlan& st : pp.stages) {
        for (const LayerRange& c : st.chunks) largest = std::max(largest, c.size());
      }
    }
    if (largest > 0 && plan.recompute_layers > largest) {
      out.push_back({"recompute_layers", std::to_string(plan.recompute_layers) + " layers recomputed in each model chunk, whose "
                                         "largest holds " + std::to_string(largest) + ": it takes 1 to " + std::to_string(largest) +
                                         " (leave it out to recompute every layer)"});
    }
    for (size_t p = 1; p < plan.pipelines.size(); ++p) {
      if (chunk_starts(plan.pipelines[p]) != chunk_starts(plan.pipelines.front())) {
        out.push_back({"recompute_layers", "recomputes the first layers of each model chunk; pipelines[" + std::to_string(p) +
                                               "] cuts the layers into chunks other than pipelines[0] does (Megatron-Core's "
                                               "pipelines are copies)"});
        break;
      }
    }
  }
  return out;
}

namespace {

// The operator's name inside its layer: "mlp_norm" of "layer3.mlp_norm".
std::string_view local_name(const Op& op) {
  const std::string_view n = op.name;
  const size_t dot = n.rfind('.');
  return dot == std::string_view::npos ? n : n.substr(dot + 1);
}

bool is_attention_input_reader(const Op& op) {
  return op.kind == OpKind::kFlashAttention || op.kind == OpKind::kAttnScores || op.kind == OpKind::kAttnContext;
}

// Of what an attention core op keeps, the share that is its inputs (queries, keys, values): the
// fused kernel also keeps its softmax statistics (4 bytes per head and query), which it rebuilds
// from nothing else. Shares hold for every shard (heads and tokens split alike).
double input_share(const Op& op) {
  if (op.kind != OpKind::kFlashAttention || op.saved_bytes <= 0) return 1;
  const double lse = static_cast<double>(op.gemm.batch) * static_cast<double>(op.gemm.m) * 4;
  return std::max(0.0, op.saved_bytes - lse) / op.saved_bytes;
}

}  // namespace

std::vector<BlockWork> recompute_first_layers(std::vector<BlockWork> out, const std::vector<BlockWork>& full,
                                              const StageWorkKey& key) {
  for (size_t b = 1; b + 1 < out.size(); ++b) {
    const int l = static_cast<int>(b) - 1;
    const auto start = std::upper_bound(key.chunk_starts.begin(), key.chunk_starts.end(), l);
    const int first = start == key.chunk_starts.begin() ? 0 : *std::prev(start);
    if (l - first < key.recompute_layers) out[b] = full[b];
  }
  for (BlockWork& bw : out) bw.same_as = -1;  // (the caller marks them again)
  return out;
}

void add_module_recompute(const OpGraph& g, const std::vector<OpForward>& ops, RecomputeModules modules,
                          std::vector<BlockWork>& blocks) {
  std::vector<std::vector<int>> readers(g.ops.size());
  for (size_t i = 0; i < g.ops.size(); ++i) {
    for (int in : g.ops[i].inputs) readers[static_cast<size_t>(in)].push_back(static_cast<int>(i));
  }
  // A norm Transformer Engine fuses into the one linear layer reading it.
  const auto fused_norm = [&](size_t i) {
    return readers[i].size() == 1 && g.ops[static_cast<size_t>(readers[i].front())].kind == OpKind::kLinear;
  };
  const auto kept_by_readers = [&](size_t i, auto&& which) {
    double bytes = 0;
    for (int r : readers[i]) {
      if (which(g.ops[static_cast<size_t>(r)])) bytes += ops[static_cast<size_t>(r)].saved_bytes;
    }
    return bytes;
  };
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const Op& op = g.ops[i];
    if (op.layer < 0 || op.layer >= g.layers) continue;
    const std::string_view n = local_name(op);
    const bool norm = op.kind == OpKind::kLayerNorm || op.kind == OpKind::kRmsNorm;
    const bool layer_norm = norm && (n == "attn_norm" || n == "mlp_norm");
    double seconds = 0, freed = 0;
    TpBytes tp;
    if (has_module(modules, RecomputeModule::kLayernorm) && layer_norm && !fused_norm(i)) {
      seconds = ops[i].seconds;
      freed = kept_by_readers(i, [](const Op& r) { return r.kind == OpKind::kLinear; });
    } else if (has_module(modules, RecomputeModule::kMoe) &&
               (n == "router" || n == "router_topk" || n == "moe_permute" || n == "expert_fc1" || n == "expert_act" ||
                n == "expert_fc2" || n == "moe_unpermute" || n == "shared_fc1" || n == "shared_act" || n == "shared_fc2")) {
      seconds = ops[i].seconds;
      tp = ops[i].tp;
      if (n != "router") freed = ops[i].saved_bytes;  // the router keeps the module's input
      BlockWork& bw = blocks[static_cast<size_t>(op.layer) + 1];
      bw.recompute_ep += ops[i].ep;
      bw.recompute_etp += ops[i].etp;
      bw.recompute_ep_rail += ops[i].ep_rail;
    } else if (has_module(modules, RecomputeModule::kMoeAct) && n == "expert_act") {
      seconds = ops[i].seconds;
      freed = kept_by_readers(i, [](const Op& r) { return r.expert; });
    } else if (has_module(modules, RecomputeModule::kMlaUpProj) &&
               (n == "q_norm" || n == "q_up" || n == "q_proj" || n == "kv_norm" || n == "kv_up")) {
      seconds = ops[i].seconds;
      // The norms and q_proj keep the checkpoint's inputs (the latents, the layer's normed input).
      if (n == "q_up" || n == "kv_up") freed = ops[i].saved_bytes;
      if (n != "q_norm" && n != "kv_norm") {
        for (int r : readers[i]) {
          const Op& core = g.ops[static_cast<size_t>(r)];
          if (!is_attention_input_reader(core)) continue;
          // Each core op's inputs once, where its first up-projected input is read.
          bool first = true;
          for (int in : core.inputs) {
            const std::string_view m = local_name(g.ops[static_cast<size_t>(in)]);
            if (m == "q_up" || m == "q_proj" || m == "kv_up") {
              first = in == static_cast<int>(i);
              break;
            }
          }
          if (first) freed += input_share(core) * ops[static_cast<size_t>(r)].saved_bytes;
        }
      }
    } else if (has_module(modules, RecomputeModule::kMlp) &&
               (n == "mlp_gate_up" || n == "mlp_up" || n == "swiglu" || n == "gelu" || n == "relu2" || n == "mlp_down" ||
                (n == "mlp_norm" && norm && fused_norm(i)))) {
      seconds = ops[i].seconds;
      tp = ops[i].tp;
      if (n != "mlp_norm") freed = ops[i].saved_bytes;  // the norm keeps the module's input
    } else if (has_module(modules, RecomputeModule::kSharedExperts) &&
               (n == "shared_fc1" || n == "shared_act" || n == "shared_fc2")) {
      seconds = ops[i].seconds;
      tp = ops[i].tp;
      freed = ops[i].saved_bytes;
    } else {
      continue;
    }
    BlockWork& bw = blocks[static_cast<size_t>(op.layer) + 1];
    freed = std::min(freed, bw.saved_bytes);
    bw.recompute_s += seconds;
    bw.recompute_tp += tp;
    bw.saved_bytes -= freed;
    bw.recompute_bytes += freed;
  }
}

}  // namespace hetsim
