// File: planner/hybrid/stage_work.cpp
#include "planner/hybrid/stage_work.hpp"

#include <algorithm>

#include "planner/hybrid/activation_offload.hpp"
#include "planner/hybrid/partial_recompute.hpp"
#include "planner/hybrid/moe_dispatch.hpp"

namespace hetsim {

StageWorkKey stage_work_key(const HybridPlan& plan, long samples, int tp, int cp, int ep, int expert_tp) {
  StageWorkKey key{std::max(1L, samples), tp, plan.sequence_parallel, plan.recompute, plan.stage_program,
                   plan.vocab_parallel, cp, plan.cp_comm, ep, expert_tp, plan.tp_comm_userbuffers && tp > 1,
                   plan.moe_dispatcher};
  if (plan.recompute == RecomputeMode::kSelective) key.recompute_modules = plan.recompute_modules;
  if (plan.recompute == RecomputeMode::kFull && plan.recompute_layers > 0 && !plan.pipelines.empty()) {
    key.recompute_layers = plan.recompute_layers;
    key.chunk_starts = chunk_starts(plan.pipelines.front());
  }
  key.offload_layers = plan.activation_offload_layers;
  return key;
}

StageWorkKey stage_work_key(const HybridPlan& plan, long samples, const StagePlan& st) {
  return stage_work_key(plan, samples, st.tp, st.cp, st.ep, st.expert_tp);
}

double BlockWork::fwd_s() const {
  double s = host_wait_fwd_s;
  for (const WorkPart& p : parts) s += p.fwd_s;
  return s;
}

double BlockWork::bwd_s() const {
  double s = recompute_s + host_wait_bwd_s;
  for (const WorkPart& p : parts) s += p.bwd_input_s + p.bwd_weight_s;
  return s;
}

namespace {



// A GEMM that userbuffers overlap with a TP collective runs as `chunks` GEMMs of 1/chunks of its rows
// (Transformer Engine's ring exchange: one per TP rank; its pipelined reduce-scatter: num_splits),
// each reading the whole weight shard: the op's time with its product at the chunks' shape, the
// casts once (before the collective). Forward: the whole product chunked; backward: the data
// gradient alone (half the product's time, as WorkPart splits it), whose output gradient's all-gather
// the ring exchange chunks, the weight gradient whole. `chunks` 1: the op's time unchanged.
OpCost chunked_time(const CostModel& cost, const Device& device, const Op& s, DType dtype, Pass pass, int chunks) {
  OpCost c = cost.op_time(device, s, dtype, pass);
  if (chunks <= 1 || s.gemm.m < 2 * chunks) return c;
  Op product = s;
  product.cast_fwd_bytes = product.cast_bwd_bytes = product.cast_fwd_transpose_bytes = product.cast_bwd_transpose_bytes = 0;
  const OpCost whole = cost.op_time(device, product, dtype, pass);
  const OpCost part = cost.op_time(device, context_shard(product, chunks, dtype), dtype, pass);
  const double share = pass == Pass::kForward ? 1.0 : 0.5;
  for (int k = 0; k < kCostSources; ++k) {
    const double delta = share * (chunks * part.by_source[k] - whole.by_source[k]);
    c.by_source[k] += delta;
    c.seconds += delta;
  }
  return c;
}

// The logits of an LM head for the slice it runs, in `e`-byte elements (0 for other operators).
double lm_logits_bytes(const Op& op, double e) {
  return op.kind == OpKind::kLmHead ? static_cast<double>(op.gemm.m) * static_cast<double>(op.gemm.n) * e : 0;
}

int block_of(const Op& op, long layers) {
  if (op.layer < 0) return 0;
  return op.layer >= layers ? static_cast<int>(layers) + 1 : op.layer + 1;
}

// Selective recompute (Korthikanti et al. 2022, Section 5): QK^T, softmax, dropout and PV run again
// in backward; only the s x s tensors (softmax output, dropout mask and output) are dropped, Q, K
// and V stay. The fused (flash) kernel keeps no s x s tensor: nothing to recompute.
// The attention's own softmax (an MoE router's top-k softmax is not part of it).
bool is_attention_softmax(const Op& op) { return op.kind == OpKind::kSoftmax && op.name.ends_with("softmax"); }
bool is_attention_core(const Op& op) {
  return op.kind == OpKind::kAttnScores || is_attention_softmax(op) || op.kind == OpKind::kAttnContext ||
         (op.kind == OpKind::kDropout && op.layer >= 0);
}
bool is_score_tensor(const Op& op) { return is_attention_softmax(op) || (op.kind == OpKind::kDropout && op.layer >= 0); }

bool same_costs(const BlockWork& a, const BlockWork& b) {
  return a.parts == b.parts && a.recompute_s == b.recompute_s && a.recompute_tp == b.recompute_tp &&
         a.recompute_cp_ring == b.recompute_cp_ring && a.recompute_cp_hide_s == b.recompute_cp_hide_s && a.recompute_cp == b.recompute_cp &&
         a.recompute_ep == b.recompute_ep && a.recompute_etp == b.recompute_etp && a.recompute_ep_rail == b.recompute_ep_rail &&
         a.saved_bytes == b.saved_bytes && a.weight_input_bytes == b.weight_input_bytes &&
         a.recompute_bytes == b.recompute_bytes && a.offload_bytes == b.offload_bytes &&
         a.host_wait_fwd_s == b.host_wait_fwd_s && a.host_wait_bwd_s == b.host_wait_bwd_s && a.params == b.params && a.expert_params == b.expert_params &&
         a.model_flops == b.model_flops && a.output_bytes == b.output_bytes;
}

// BlockWork::same_as of every block, against the kinds found so far (a handful).
void mark_same_blocks(std::vector<BlockWork>& blocks) {
  std::vector<int> kinds;
  for (size_t b = 0; b < blocks.size(); ++b) {
    auto it = std::find_if(kinds.begin(), kinds.end(), [&](int k) { return same_costs(blocks[k], blocks[b]); });
    if (it == kinds.end()) kinds.push_back(static_cast<int>(b));
    else blocks[b].same_as = *it;
  }
}

}  // namespace

std::vector<BlockWork> stage_block_work(const ModelSpec& model, const Device& device, DType dtype, const CostModel& cost,
                                        const StageWorkKey& key, const LayerProgram& layer) {
  if (key.offload_layers > 0) {
    StageWorkKey kept = key;
    kept.offload_layers = 0;
    std::vector<BlockWork> out = stage_block_work(model, device, dtype, cost, kept, layer);
    add_activation_offload(out, static_cast<int>(main_layers(model)), key.offload_layers, device);
    mark_same_blocks(out);
    return out;
  }
  if (key.recompute == RecomputeMode::kFull && key.recompute_layers > 0) {
    // Megatron-Core's block method: each chunk's first layers as under full recompute, the rest as without.
    StageWorkKey every = key;
    every.recompute_layers = 0;
    every.chunk_starts.clear();
    StageWorkKey none = every;
    none.recompute = RecomputeMode::kNone;
    std::vector<BlockWork> out = recompute_first_layers(stage_block_work(model, device, dtype, cost, none, layer),
                                                        stage_block_work(model, device, dtype, cost, every, layer), key);
    mark_same_blocks(out);
    return out;
  }
  ModelSpec plain = model;
  plain.training.recompute = Recompute::kNone;  // recompute is this plan's choice, modelled below
  const OpGraph g = build_op_graph(plain, key.samples, dtype, device.kernel_support());
  const int tp = std::max(1, key.tp), cp = std::max(1, key.cp);
  const double e = dtype_bytes(dtype);
  const double tokens = static_cast<double>(key.samples) * static_cast<double>(model.seq_len) / cp;  // this rank's
  const double hidden_bytes = tokens * static_cast<double>(model.hidden) * e;
  // Context parallelism, per layer and GPU (heads split tp ways): ring attention circulates this
  // rank's K and V (cp - 1 steps, as an all-gather of cp of them), the backward K, V and their
  // gradients; all-to-all attention exchanges this rank's Q, K, V before and its output after.
  // All-to-all sizes are each GPU's whole buffer (sim/program.hpp, nccl-tests' convention): the
  // collective keeps 1/n of it and sends the other (n - 1)/n.
  const double head = static_cast<double>(attention_head_dim(model));
  const double q = static_cast<double>(model.heads) * head, kv = static_cast<double>(model.kv_heads) * head;
  const double kv_local = tokens * 2 * kv / tp * e;
  const bool ring = cp > 1 && key.cp_comm == CpComm::kRing, ulysses = cp > 1 && key.cp_comm == CpComm::kAllToAll;
  const double qkv_a2a = tokens * (q + 2 * kv) / tp * e;
  const double out_a2a = tokens * q / tp * e;
  // Expert parallelism, per MoE layer and GPU: it dispatches its T/tp tokens to the GPUs of their
  // experts and gets as many back in the combine, as the plan's dispatcher moves them
  // (moe_dispatch.hpp: the token copies, top_k each or the padded slots under a capacity, for
  // alltoall); expert TP all-gathers the received rows over its expert_tp GPUs and reduce-scatters
  // the outputs. The busiest GPU moves router_imbalance times the mean.
  const int ep = std::max(1, key.ep), etp = std::max(1, key.expert_tp);
  const double imbalance = model.moe ? model.moe->router_imbalance : 1.0;
  double moe_rows = 0;  // token copies one GPU dispatches
  if (model.moe) {
    const double routed = tokens * static_cast<double>(model.moe->top_k);
    moe_rows = (model.moe->capacity_factor ? static_cast<double>(model.moe->experts) *
                                                 static_cast<double>(expert_rows(*model.moe, routed))
                                           : routed) / tp;
  }
  const double token_bytes = static_cast<double>(moe_token_width(model)) * e;  // latent MoE: the latent's rows
  const double moe_bytes = moe_rows * token_bytes * imbalance;
  const DispatchTraffic dispatch = model.moe ? dispatch_traffic(key.dispatcher, *model.moe, tokens / tp, moe_rows, token_bytes,
                                                                {ep, key.ep_nodes})
                                             : DispatchTraffic{};
  const bool dispatches = dispatch.all_to_all > 0 || dispatch.all_gather > 0 || dispatch.rail_all_to_all > 0;
  const double gathered_tokens = dispatch.all_gather > 0 ? dispatch.all_gather - tokens / tp * token_bytes : 0;  // other ranks'

  const double expert_gather = etp > 1 ? moe_bytes * etp : 0;

  std::vector<BlockWork> blocks(static_cast<size_t>(g.layers) + 2);
  blocks.front().name = "embedding";
  blocks.back().name = "head";
  for (long l = 0; l < g.layers; ++l) blocks[l + 1].name = "layer" + std::to_string(l);
  std::vector<double> layer_fwd(blocks.size(), 0), core_fwd(blocks.size(), 0), core_saved(blocks.size(), 0);
  std::vector<OpForward> forwards(g.ops.size());  // for recompute by module

  int open_block = -1;
  WorkPart part;
  auto close_part = [&](int b) {
    const bool empty = part.fwd_s == 0 && part.bwd_input_s == 0 && part.bwd_weight_s == 0 && !part.tp_fwd.any() &&
                       !part.tp_bwd.any() && !part.cp_fwd.any() && !part.cp_bwd.any() && part.cp_ring_fwd == 0 &&
                       !part.ep_fwd.any() && !part.ep_bwd.any() && !part.etp_fwd.any() && !part.etp_bwd.any() &&
                       part.ep_rail_fwd == 0 && part.ep_rail_bwd == 0;
    if (empty && !blocks[b].parts.empty()) return;
    blocks[b].parts.push_back(part);
    part = WorkPart{};
  };
  double pending_gather = 0;  // userbuffers: an all-gather waiting for the next column-parallel GEMM
  // The format an element of the last summed output's gradient is all-gathered in under sequence
  // parallelism, per the dtype's: the row-split GEMM's, which casts it before the gather.
  double row_gather_format = 1;
  // Position of each operator inside its transformer layer (every layer has the same operators).
  int layer_start = 0, current_layer = -1;
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const Op& op = g.ops[i];
    const int b = block_of(op, g.layers);
    if (open_block >= 0 && b != open_block) close_part(open_block);
    open_block = b;
    BlockWork& bw = blocks[b];
    const bool in_layer = op.layer >= 0 && op.layer < g.layers;
    if (in_layer && op.layer != current_layer) {
      current_layer = op.layer;
      layer_start = static_cast<int>(i);
    }
    const size_t at = i - static_cast<size_t>(layer_start);
    // A sequence-parallel all-gather into this GEMM moves its low format where a recipe casts its
    // input before the gather (gemm_precision.hpp, CastOperand::kGathered): its bytes per the dtype's.
    const double gather_format = op.gemm_dtype ? dtype_bytes(*op.gemm_dtype) / e : 1.0;
    const OpPlacement pl = in_layer && tp > 1 && at < layer.ops.size()
                               ? layer.ops[at]
                               : megatron_placement(op, key.sequence_parallel, key.vocab_parallel, tp, hidden_bytes, model.hidden, tokens,
                                                    lm_logits_bytes(op, e), gather_format);
    // Userbuffers: collectives beside a GEMM are chunked with it (WorkPart::tp_fwd_exposed).
    // Sequence parallelism's all-reduce after a row-parallel GEMM is its reduce-scatter, chunked with
    // that GEMM, and an all-gather before the next column-parallel GEMM, chunked with that one.
    const bool chunked = key.userbuffers && is_matmul(op.kind) && op.params > 0;
    const double ring_chunks = static_cast<double>(tp), pipeline_chunks = 4;
    TpBytes before = pl.before_fwd;
    if (chunked && pending_gather > 0 && pl.split == TpSplit::kColumn) {
      before.all_gather += pending_gather * gather_format;
      pending_gather = 0;
    }
    if (before.any() || pl.before_bwd.any()) {
      part.tp_fwd += chunked ? before.scaled((ring_chunks - 1) / ring_chunks) : before;
      if (chunked) part.tp_fwd_exposed += before.scaled(1 / ring_chunks);
      close_part(b);
      part.tp_bwd += pl.before_bwd;
    }
    const bool opens_attention = in_layer && (op.kind == OpKind::kAttnScores || op.kind == OpKind::kFlashAttention);
    const bool closes_attention = in_layer && (op.kind == OpKind::kAttnContext || op.kind == OpKind::kFlashAttention);
    if (ulysses && opens_attention) {  // sequence shards -> head shards
      part.cp_fwd.all_to_all += qkv_a2a;
      close_part(b);
      part.cp_bwd.all_to_all += qkv_a2a;
    }
    if (ring && opens_attention) {
      part.cp_ring_fwd += cp * kv_local;
      part.cp_ring_bwd += 2 * cp * kv_local;
    }
    if (in_layer && op.kind == OpKind::kMoeCombine && (dispatches || expert_gather > 0)) {
      // The experts' outputs go back: reduce-scattered over expert TP, then the combine (the
      // dispatch's all-to-alls again, or the reduce-scatter summing what the all-gather spread).
      part.etp_fwd.reduce_scatter += expert_gather;
      part.ep_fwd.all_to_all += dispatch.all_to_all;
      part.ep_fwd.reduce_scatter += dispatch.all_gather;
      part.ep_rail_fwd += dispatch.rail_all_to_all;
      forwards[i].etp = part.etp_fwd;
      forwards[i].ep = part.ep_fwd;
      forwards[i].ep_rail = part.ep_rail_fwd;
      close_part(b);
      part.etp_bwd.all_gather += expert_gather;
      part.ep_bwd.all_to_all += dispatch.all_to_all;
      part.ep_bwd.all_gather += dispatch.all_gather;
      part.ep_rail_bwd += dispatch.rail_all_to_all;
    }
    const TpSplit split = pl.split;
    // A sequence split is a context split by another name: 1/tp of the tokens, the weights whole.
    Op s = op.expert                      ? expert_shard(context_shard(op, cp, dtype), tp, ep, etp, imbalance, dtype)
           : split == TpSplit::kSequence ? context_shard(context_shard(op, cp, dtype), tp, dtype)
                                         : tp_shard(context_shard(op, cp, dtype), split, tp, key.sequence_parallel);
    if (gathered_tokens > 0 && (op.kind == OpKind::kMoeDispatch || op.kind == OpKind::kMoeCombine)) {
      // allgather: the permutation picks this GPU's rows out of every EP rank's gathered tokens, and
      // the unpermutation writes them back into that whole buffer for the reduce-scatter.
      s.fwd_bytes += gathered_tokens;
      s.bwd_bytes += gathered_tokens;
    }
    // Userbuffers chunk a layer's column-split GEMM with the all-gather before it (a ring, tp chunks) and
    // a row-split one with the reduce-scatter after it (pipelined, pipeline_chunks), whose backward data
    // gradient the ring exchange chunks with its output gradient's all-gather (tp chunks).
    int fwd_chunks = 1, bwd_chunks = 1;
    if (chunked && in_layer && !op.expert && tp > 1) {
      if (split == TpSplit::kColumn && before.any()) fwd_chunks = static_cast<int>(ring_chunks);
      else if (pl.after_fwd.any()) fwd_chunks = static_cast<int>(pipeline_chunks);
      if (key.sequence_parallel && split == TpSplit::kRow && pl.after_fwd.any()) bwd_chunks = static_cast<int>(ring_chunks);
    }
    const OpCost fwd = chunked_time(cost, device, s, dtype, Pass::kForward, fwd_chunks);
    const OpCost bwd = chunked_time(cost, device, s, dtype, Pass::kBackward, bwd_chunks);
    // A matrix product with weights spends half its backward on the weight gradient.
    const double w = is_matmul(s.kind) && s.params > 0 ? 0.5 * bwd.seconds : 0;
    // Each backward collective of a column-split layer can hide under one of its two GEMMs: the
    // input gradient's reduction under the weight gradient, SP's re-gather of the input under the
    // input gradient.
    TpBytes bwd_tp = pl.bwd;
    if (key.sequence_parallel && split == TpSplit::kColumn && bwd_tp.all_reduce > 0 && row_gather_format < 1) {
      // Its input gradient's all-reduce is sequence parallelism's reduce-scatter and the all-gather
      // of the output gradient the row-split GEMM before it casts first (gemm_precision.hpp).
      bwd_tp.reduce_scatter += bwd_tp.all_reduce;
      bwd_tp.all_gather += bwd_tp.all_reduce * row_gather_format;
      bwd_tp.all_reduce = 0;
    }
    TpBytes around = pl.before_bwd;
    around += bwd_tp;
    part.bwd_overlap_s += w * std::min(2, around.count());
    part.fwd_s += fwd.seconds;
    forwards[i].seconds = fwd.seconds;
    forwards[i].saved_bytes = s.saved_bytes;
    forwards[i].tp = before;
    forwards[i].tp += pl.after_fwd;
    if (chunked && before.any() && !blocks[b].parts.empty()) {
      // All but the first chunk of this GEMM run under the all-gather ending the part before.
      const double moved = fwd.seconds * (ring_chunks - 1) / ring_chunks;
      part.fwd_s -= moved;
      blocks[b].parts.back().fwd_s += moved;
      blocks[b].parts.back().tp_fwd_hide_s += moved;
    }
    part.bwd_input_s += bwd.seconds - w;
    part.bwd_weight_s += w;
    for (int k = 0; k < kCostSources; ++k) bw.sources[k] += fwd.by_source[k] + bwd.by_source[k];
    bw.saved_bytes += s.saved_bytes;
    if (w > 0) bw.weight_input_bytes += s.saved_bytes;
    bw.params += s.params;
    if (op.expert) bw.expert_params += s.params;
    bw.model_flops += s.fwd_flops + s.bwd_flops;
    layer_fwd[b] += fwd.seconds;
    if (ring && (is_attention_core(op) || op.kind == OpKind::kFlashAttention)) {
      part.cp_hide_fwd_s += fwd.seconds;
      part.cp_hide_bwd_s += bwd.seconds;
    }
    if (in_layer && op.kind == OpKind::kMoeDispatch && (dispatches || expert_gather > 0)) {
      // The tokens go to their experts' GPUs, then are gathered over expert TP.
      part.ep_fwd.all_to_all += dispatch.all_to_all;
      part.ep_fwd.all_gather += dispatch.all_gather;
      part.ep_rail_fwd += dispatch.rail_all_to_all;
      part.etp_fwd.all_gather += expert_gather;
      forwards[i].ep += part.ep_fwd;
      forwards[i].etp += part.etp_fwd;
      forwards[i].ep_rail += part.ep_rail_fwd;
      close_part(b);
      part.ep_bwd.all_to_all += dispatch.all_to_all;
      part.ep_bwd.reduce_scatter += dispatch.all_gather;
      part.ep_rail_bwd += dispatch.rail_all_to_all;
      part.etp_bwd.reduce_scatter += expert_gather;
    }
    if (ulysses && closes_attention) {  // head shards -> sequence shards
      part.cp_fwd.all_to_all += out_a2a;
      close_part(b);
      part.cp_bwd.all_to_all += out_a2a;
    }
    if (is_attention_core(op)) core_fwd[b] += fwd.seconds;
    if (is_score_tensor(op)) core_saved[b] += s.saved_bytes;
    part.tp_bwd += bwd_tp;
    if (pl.after_fwd.all_reduce > 0) row_gather_format = split == TpSplit::kRow ? gather_format : 1.0;
    if (pl.after_fwd.any() || pl.after_bwd.any()) {
      TpBytes after = pl.after_fwd;
      if (chunked && key.sequence_parallel) {  // the all-gather half waits for the next column-parallel GEMM
        after.reduce_scatter += after.all_reduce;
        pending_gather += after.all_reduce;
        after.all_reduce = 0;
      }
      part.tp_fwd += chunked ? after.scaled((pipeline_chunks - 1) / pipeline_chunks) : after;
      if (chunked) {  // all but the last chunk of the reduce-scatter under the GEMM's later chunks
        part.tp_fwd_exposed += after.scaled(1 / pipeline_chunks);
        part.tp_fwd_hide_s += fwd.seconds * (pipeline_chunks - 1) / pipeline_chunks;
      }
      close_part(b);
      // The dual of a collective on the output runs before this operator's backward: at the end
      // of the following span's backward.
      part.tp_bwd += pl.after_bwd;
    }
    if (op.layer < g.layers) bw.output_bytes = hidden_bytes;
  }
  if (open_block >= 0) close_part(open_block);
  if (pending_gather > 0 && !blocks.back().parts.empty()) blocks.back().parts.back().tp_fwd.all_gather += pending_gather;
  // Tensors crossing blocks, summed per (producer block, consumer block).
  for (const LayerEdge& e : layer_edges(g)) {
    const int from = e.from_layer < 0 ? 0 : static_cast<int>(std::min<long>(e.from_layer, g.layers)) + 1;
    const int to = e.to_layer >= g.layers ? static_cast<int>(g.layers) + 1 : e.to_layer + 1;
    if (to <= from) continue;
    std::vector<std::pair<int, double>>& c = blocks[from].consumers;
    auto it = std::find_if(c.begin(), c.end(), [&](const std::pair<int, double>& x) { return x.first == to; });
    if (it == c.end()) c.emplace_back(to, e.bytes);
    else it->second += e.bytes;
  }
  // Embedding parameters under TP: vocabulary-parallel, one shard per GPU.
  if (tp > 1 && model.family != Family::kVit && model.family != Family::kVgg) blocks.front().params /= tp;

  const bool selective = key.recompute == RecomputeMode::kSelective;
  if (selective && (key.recompute_modules & ~kDefaultRecomputeModules) != 0) {
    add_module_recompute(g, forwards, key.recompute_modules, blocks);
  }
  for (size_t b = 1; b + 1 < blocks.size(); ++b) {
    BlockWork& bw = blocks[b];
    if (key.recompute == RecomputeMode::kFull) {
      // Only the layer's input is kept; the whole forward runs again before the backward.
      const double input = key.sequence_parallel ? hidden_bytes / tp : hidden_bytes;
      bw.recompute_bytes = bw.saved_bytes;
      bw.saved_bytes = std::min(bw.saved_bytes, input);
      bw.recompute_s = layer_fwd[b];
      // The forward's TP collectives run again with it (Megatron re-runs the whole layer forward).
      for (const WorkPart& p : bw.parts) {
        bw.recompute_tp += p.tp_fwd;
        bw.recompute_tp += p.tp_fwd_exposed;
        // And its CP exchanges: the attention's K, V ring, the all-to-alls around it.
        bw.recompute_cp_ring += p.cp_ring_fwd;
        bw.recompute_cp_hide_s += p.cp_hide_fwd_s;
        bw.recompute_cp += p.cp_fwd;
        // And its experts' dispatch and combine (Megatron-Core re-runs the whole layer's forward).
        bw.recompute_ep += p.ep_fwd;
        bw.recompute_etp += p.etp_fwd;
        bw.recompute_ep_rail += p.ep_rail_fwd;
      }
    } else if (selective && has_module(key.recompute_modules, RecomputeModule::kCoreAttn) && core_saved[b] > 0) {
      // Korthikanti et al.: the attention core (scores, softmax, context) is recomputed.
      bw.recompute_bytes += core_saved[b];
      bw.saved_bytes -= core_saved[b];
      bw.recompute_s += core_fwd[b];
      // Ring attention's core needs the other CP ranks' K and V again; its inputs were kept after
      // any all-to-all (Ulysses), which is not repeated.
      if (core_fwd[b] > 0) {
        for (const WorkPart& p : bw.parts) {
          bw.recompute_cp_ring += p.cp_ring_fwd;
          bw.recompute_cp_hide_s += p.cp_hide_fwd_s;
        }
        bw.recompute_cp_hide_s = std::min(bw.recompute_cp_hide_s, core_fwd[b]);
      }
    }
    bw.weight_input_bytes = std::min(bw.weight_input_bytes, bw.saved_bytes);
  }
  mark_same_blocks(blocks);
  return blocks;
}

}  // namespace hetsim
