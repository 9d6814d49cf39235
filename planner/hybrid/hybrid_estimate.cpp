// File: planner/hybrid/hybrid_estimate.cpp
#include "planner/hybrid/hybrid_estimate.hpp"

#include <algorithm>
#include <map>

#include "base/units.hpp"
#include "planner/hybrid/activation_offload.hpp"
#include "planner/hybrid/moe_dispatch.hpp"
#include "planner/hybrid/pipeline_schedule.hpp"
#include "sim/collective.hpp"
#include "sim/schedule.hpp"

namespace hetsim {

namespace {

// One part of a pass under combined 1F1B: its kernels, then its expert collectives.
struct PassUnit {
  double compute_s = 0;
  double collectives_s = 0;
};

// Seconds for a forward `a` and a backward `b` run together as pass_emitter's
// emit_overlapped_passes writes them: their parts in turn (b's first, a's first, b's second, ...:
// Megatron-Core's order) on one compute stream, each part's collectives after it on one expert
// stream, and each part waiting for its own pass's collectives before it.
double paired_seconds(const std::vector<PassUnit>& a, const std::vector<PassUnit>& b) {
  double compute = 0, expert = 0;
  double ready[2] = {0, 0};  // when each pass's collectives so far are done
  for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    for (int pass : {1, 0}) {
      const std::vector<PassUnit>& units = pass == 0 ? a : b;
      if (i >= units.size()) continue;
      compute = std::max(compute, ready[pass]) + units[i].compute_s;
      if (units[i].collectives_s > 0) {
        expert = std::max(expert, compute) + units[i].collectives_s;
        ready[pass] = expert;
      }
    }
  }
  return std::max({compute, ready[0], ready[1]});
}

// The share of a 1F1B-like stage's forward-backward couples that combined 1F1B runs together: all
// but the warm-up's forwards (one fewer than the passes `held` in flight) and as many cool-down
// backwards. `steps`: the stage's forwards (micro-batches x chunks).
double paired_share(long steps, long held) {
  return steps > 0 ? static_cast<double>(std::max(0L, steps - std::max(0L, held - 1))) / static_cast<double>(steps) : 0;
}

}  // namespace

HybridEstimator::HybridEstimator(const ModelSpec& model, const Cluster& cluster, PipelineProgramBuilder& builder)
    : model_(model), cluster_(cluster), builder_(builder), fabric_(cluster) {}

double HybridEstimator::tp_time(int node_type, int tp, CollectiveOp op, double bytes) {
  if (tp < 2 || bytes <= 0) return 0;
  const auto key = std::make_tuple(node_type, tp, static_cast<int>(op), bytes);
  if (auto it = tp_cache_.find(key); it != tp_cache_.end()) return it->second;
  // Past 1 TiB (more than any GPU's memory holds: such a plan never fits) the 1 TiB estimate scaled
  // by the size: a pipelined algorithm's schedule holds a piece per 512 KiB, and a model of 2^24
  // hidden and sequence (hundreds of TiB a collective) took gigabytes and minutes to plan.
  const double priced = std::min(bytes, kMaxCollectiveBytes);
  const double t = choose_algorithm(collective(op, first_node_group(cluster_, node_type, tp), priced), cluster_, fabric_).estimate_s *
                   (bytes / priced);
  tp_cache_[key] = t;
  return t;
}

double HybridEstimator::tp_time(int node_type, int tp, const TpBytes& bytes) {
  return tp_time(node_type, tp, CollectiveOp::kAllReduce, bytes.all_reduce) +
         tp_time(node_type, tp, CollectiveOp::kAllGather, bytes.all_gather) +
         tp_time(node_type, tp, CollectiveOp::kReduceScatter, bytes.reduce_scatter) +
         tp_time(node_type, tp, CollectiveOp::kAllToAll, bytes.all_to_all);
}

double HybridEstimator::fit_time(const std::vector<int>& group, double bytes, CollectiveOp op, int calls) {
  if (group.size() < 2 || bytes <= 0) return 0;
  auto& cache = fit_cache_.at(static_cast<size_t>(op));
  auto it = cache.find(group);
  if (it == cache.end()) {
    it = cache.emplace(group, fit_alpha_beta(op, group, cluster_, fabric_, 16.0 * 1024 * 1024, 256.0 * 1024 * 1024)).first;
  }
  return std::max(1, calls) * it->second.alpha_s + it->second.beta_s_per_byte * bytes;
}

double HybridEstimator::send_time(int src, int dst, double bytes) {
  if (bytes <= 0) return 0;
  return concurrent_time({Flow{src, dst, bytes}}, fabric_);
}

double HybridEstimator::tied_embedding_time(const HybridPlan& plan, double tied_params, double grad_bytes_per_param) {
  const bool tied = tied_params > 0 && std::all_of(plan.pipelines.begin(), plan.pipelines.end(),
                                                   [](const PipelinePlan& p) { return p.stages.size() > 1; });
  if (!tied) return 0;
  // A two-rank all-reduce moves the whole gradient each way (two ring steps of half of it).
  std::vector<Flow> flows;
  for (const PipelinePlan& pl : plan.pipelines) {
    const StagePlan& first = pl.stages.front();
    const StagePlan& last = pl.stages.back();
    const double bytes = tied_params / first.tp * grad_bytes_per_param;
    const int last_copies = std::max(1, last.dp());
    for (int j = 0; j < first.dp(); ++j) {
      const int b = j % last_copies;
      for (int rank = 0; rank < first.group(); ++rank) {
        const int x = first.devices[j * first.group() + rank];
        const int y = last.devices[b * last.group() + rank % last.group()];
        if (x == y) continue;
        flows.push_back({x, y, bytes});
        flows.push_back({y, x, bytes});
      }
    }
  }
  return flows.empty() ? 0 : concurrent_time(flows, fabric_);
}

double HybridEstimator::boundary_time(const HybridPlan& plan, const StagePlan& st, const StagePlan& next, double copy) {
  const int from = st.devices.back(), to = next.devices.front();
  const int nics_from = cluster_.node_type_of_gpu(from).nic.count, nics_to = cluster_.node_type_of_gpu(to).nic.count;
  const bool same_node = cluster_.same_domain(from, to);  // NVLink all the way
  // Transfers from one TP group to another run on as many NICs as both ends have, at most.
  const int nics = same_node ? std::min(st.tp, next.tp) : std::min({st.tp, next.tp, nics_from, nics_to});
  const double one = send_time(from, to, copy);
  switch (plan.resharding.method) {
    case ReshardMethod::kSignal: return send_time(from, to, 1);  // the latency alone
    case ReshardMethod::kBroadcast: return one;  // one sender, the network once, NVLink after it
    case ReshardMethod::kSendRecv: return one * next.tp / std::max(1, nics);  // every receiving rank the whole copy
    case ReshardMethod::kLocalAllGather:
      if (next.tp == 1) return one;
      // Each receiving rank gets 1/tp; an all-gather (half an all-reduce) rebuilds the copy.
      return one / std::max(1, nics) + tp_time(cluster_.gpus[to].node_type, next.tp, CollectiveOp::kAllReduce, copy) / 2;
  }
  return one;
}

double HybridEstimator::optimizer_s(int node_type, double params) {
  const PipelineContext& ctx = builder_.context();
  return ctx.optimizer_s ? ctx.optimizer_s(node_type, params) : 0;
}

HybridEstimator::StageTimes HybridEstimator::stage_times(const HybridPlan& plan, const StagePlan& st,
                                                         const std::vector<int>& blocks, int node_type, long samples,
                                                         double paired_share) {
  StageTimes t;
  const std::vector<BlockWork>& w =
      builder_.work(node_type, stage_work_key(plan, samples, st));
  const bool overlap = plan.tp_comm_overlap && !splits_weight_gradient(plan.schedule);
  // Context parallelism: the CP group of the stage's first copy (its TP rank 0 of every CP rank).
  std::vector<int> cp_group;
  for (int c = 0; st.cp > 1 && c < st.cp && c * st.tp < static_cast<int>(st.devices.size()); ++c) {
    cp_group.push_back(st.devices[c * st.tp]);
  }
  std::sort(cp_group.begin(), cp_group.end());
  const auto cp_time = [&](const TpBytes& bytes) { return fit_time(cp_group, bytes.all_to_all, CollectiveOp::kAllToAll); };
  const auto ring_exposed = [&](double bytes, double hide) {
    return std::max(0.0, fit_time(cp_group, bytes, CollectiveOp::kAllGather) - hide);
  };
  // Expert parallelism: the first expert group's EP group (its expert-TP rank 0) and expert-TP group.
  std::vector<int> ep_group, etp_group;
  for (int i = 0; st.ep > 1 && i < st.ep && i * st.expert_tp < static_cast<int>(st.devices.size()); ++i) {
    ep_group.push_back(st.devices[i * st.expert_tp]);
  }
  for (int i = 0; st.expert_tp > 1 && i < st.expert_tp && i < static_cast<int>(st.devices.size()); ++i) etp_group.push_back(st.devices[i]);
  std::sort(ep_group.begin(), ep_group.end());
  std::sort(etp_group.begin(), etp_group.end());
  // The flex dispatcher: its in-node all-to-all over the group's GPUs on its first node, beside
  // the inter-node one over its first rail (moe_dispatch.hpp).
  std::vector<int> ep_node = ep_group, ep_rail;
  if (plan.moe_dispatcher == MoeDispatcher::kFlex && !ep_group.empty()) {
    FlexGroups f = flex_groups(ep_group, cluster_);
    ep_node = f.nodes.front();
    if (!f.rails.empty()) ep_rail = f.rails.front();
  }
  const auto ep_time = [&](const TpBytes& ep, const TpBytes& etp, double rail) {
    return std::max(fit_time(ep_node, ep.all_to_all, CollectiveOp::kAllToAll), fit_time(ep_rail, rail, CollectiveOp::kAllToAll)) +
           fit_time(ep_group, ep.all_gather, CollectiveOp::kAllGather) +
           fit_time(ep_group, ep.reduce_scatter, CollectiveOp::kReduceScatter) +
           fit_time(etp_group, etp.all_gather, CollectiveOp::kAllGather) +
           fit_time(etp_group, etp.reduce_scatter, CollectiveOp::kReduceScatter);
  };
  // One block's compute and exposed collectives, costed once per kind of block (BlockWork::same_as).
  // `paired`: what its expert collectives add when its forward and a backward run together.
  struct BlockTimes {
    double f = 0, b = 0, w = 0, ep_f = 0, ep_b = 0, paired = 0;
  };
  const bool pairs = plan.overlap_moe_expert_parallel_comm && st.ep > 1;
  const auto block_times = [&](const BlockWork& bw) {
    BlockTimes x;
    std::vector<PassUnit> fwd, bwd;  // each part's compute and the expert collectives after it
    const double recompute_ep = ep_time(bw.recompute_ep, bw.recompute_etp, bw.recompute_ep_rail);
    const double recompute = bw.recompute_s + tp_time(node_type, st.tp, bw.recompute_tp) + cp_time(bw.recompute_cp) +
                             ring_exposed(bw.recompute_cp_ring, bw.recompute_cp_hide_s);
    x.f += bw.host_wait_fwd_s;
    x.b += recompute + bw.host_wait_bwd_s;
    x.ep_b += recompute_ep;
    for (const WorkPart& part : bw.parts) {
      // Userbuffers: one chunk alone, the rest under the GEMM's last tp_fwd_hide_s seconds.
      const double f = part.fwd_s - part.tp_fwd_hide_s + tp_time(node_type, st.tp, part.tp_fwd_exposed) +
                       std::max(tp_time(node_type, st.tp, part.tp_fwd), part.tp_fwd_hide_s) + cp_time(part.cp_fwd) +
                       ring_exposed(part.cp_ring_fwd, part.cp_hide_fwd_s);
      const double sync = tp_time(node_type, st.tp, part.tp_bwd);
      const double b = part.bwd_input_s + part.bwd_weight_s + sync - (overlap ? std::min(sync, part.bwd_overlap_s) : 0) +
                       cp_time(part.cp_bwd) + ring_exposed(part.cp_ring_bwd, part.cp_hide_bwd_s);
      const PassUnit f_unit{f, ep_time(part.ep_fwd, part.etp_fwd, part.ep_rail_fwd)},
          b_unit{b, ep_time(part.ep_bwd, part.etp_bwd, part.ep_rail_bwd)};
      x.f += f;
      x.b += b;
      x.w += part.bwd_weight_s;
      x.ep_f += f_unit.collectives_s;
      x.ep_b += b_unit.collectives_s;
      fwd.push_back(f_unit);
      bwd.push_back(b_unit);
    }
    if (pairs) {
      std::reverse(bwd.begin(), bwd.end());  // the backward: the last part first, the recompute inside it
      if (!fwd.empty()) fwd.front().compute_s += bw.host_wait_fwd_s;
      if (!bwd.empty()) {
        bwd.front().compute_s += recompute + bw.host_wait_bwd_s;
        bwd.front().collectives_s += recompute_ep;
      }
      x.paired = paired_seconds(fwd, bwd) - x.f - x.b;
    }
    return x;
  };
  std::vector<BlockTimes> kinds;       // times of each kind met so far
  std::vector<int> slot(w.size(), -1);  // its index there, by the kind's first block
  double ep_f = 0, ep_b = 0, paired = 0;
  // Gradient buckets as gradient_buckets() packs them: blocks in backward order, a new bucket when
  // the next block would take it over ctx.bucket_params.
  const auto pack = [bucket_params = builder_.context().bucket_params](double params, double& fill, int& buckets) {
    if (buckets == 0 || fill + params > bucket_params) {
      ++buckets;
      fill = 0;
    }
    fill += params;
  };
  double dense_fill = 0, expert_fill = 0;
  for (auto b = blocks.rbegin(); b != blocks.rend(); ++b) {
    pack(w[*b].params - w[*b].expert_params, dense_fill, t.buckets);
    if (w[*b].expert_params > 0) pack(w[*b].expert_params, expert_fill, t.expert_buckets);
  }
  for (int b : blocks) {
    const BlockWork& bw = w[b];
    const int kind = bw.same_as >= 0 ? bw.same_as : b;
    if (slot[kind] < 0) {
      slot[kind] = static_cast<int>(kinds.size());
      kinds.push_back(block_times(w[kind]));
    }
    const BlockTimes& x = kinds[slot[kind]];
    t.f += x.f;
    t.b += x.b;
    t.w += x.w;
    ep_f += x.ep_f;
    ep_b += x.ep_b;
    paired += x.paired;
    t.params += bw.params;
    t.expert_params += bw.expert_params;
    t.saved_per_mb += bw.saved_bytes;
    t.offload_per_mb += bw.offload_bytes;
    t.weight_input_per_mb += bw.weight_input_bytes;
    t.recompute_bytes = std::max(t.recompute_bytes, bw.recompute_bytes);
  }
  // Combined 1F1B: a forward and a backward run together; a `paired_share` of the steps (those
  // outside the warm-up and cool-down) have `paired` seconds of expert collectives exposed, the
  // others all. Split between forward and backward as the collectives are.
  const double exposed = pairs && ep_f + ep_b > 0 ? (paired_share * paired + (1 - paired_share) * (ep_f + ep_b)) / (ep_f + ep_b) : 1.0;
  t.f += ep_f * exposed;
  t.b += ep_b * exposed;
  if (samples == 0) t.f = t.b = t.w = t.saved_per_mb = t.weight_input_per_mb = t.recompute_bytes = 0;
  t.grad_bytes = t.params * builder_.context().grad_bytes_per_param;
  return t;
}

HybridEstimate HybridEstimator::estimate(const HybridPlan& plan) {
  builder_.prepare(plan);
  const PipelineContext& ctx = builder_.context();
  const StageWorkFn work = [this](int nt, const StageWorkKey& k) -> const std::vector<BlockWork>& { return builder_.work(nt, k); };
  const int layers = static_cast<int>(model_.layers);
  const bool split_w = splits_weight_gradient(plan.schedule);
  HybridEstimate out;
  // Copies of every block: the first TP rank of each data-parallel copy, over all pipelines.
  std::vector<std::vector<int>> holders(layers + 2), expert_holders(layers + 2);
  for (const PipelinePlan& pl : plan.pipelines) {
    const int P = static_cast<int>(pl.stages.size());
    for (int s = 0; s < P; ++s) {
      const StagePlan& st = pl.stages[s];
      for (int c = 0; c < static_cast<int>(st.chunks.size()); ++c) {
        for (int b : stage_blocks(st, s, P, c, layers)) {
          // Every copy's TP rank 0, of every CP rank: the group synchronising that shard.
          for (int j = 0; j < st.dp(); ++j) {
            for (int cr = 0; cr < st.cp; ++cr) holders[b].push_back(st.devices[j * st.group() + cr * st.tp]);
          }
          // The copies of the first expert shard: one device per expert group.
          for (size_t k = 0; k < st.devices.size(); k += static_cast<size_t>(std::max(1, st.expert_group()))) {
            expert_holders[b].push_back(st.devices[k]);
          }
        }
      }
    }
  }
  for (std::vector<int>& h : holders) std::sort(h.begin(), h.end());
  for (std::vector<int>& h : expert_holders) std::sort(h.begin(), h.end());

  // After every copy's gradient sync, the embedding's across the stages that share it.
  const double tied_sync = tied_embedding_time(plan, ctx.tied_embedding_params, ctx.grad_bytes_per_param);
  for (const PipelinePlan& pl : plan.pipelines) {
    const int P = static_cast<int>(pl.stages.size());
    const int v = static_cast<int>(pl.stages[0].chunks.size());
    const double m = static_cast<double>(pl.micro_batches);
    double sum_t = 0, max_t = 0, sum_tw = 0, max_w = 0, sum_c = 0, sum_b = 0, exposed = 0, opt = 0;
    std::vector<double> sync(P, 0), bwd(P, 0), fwd(P, 0), gather_all(P, 0), gather_first(P, 0), stage_t(P, 0), cut(P, 0);
    for (int s = 0; s < P; ++s) {
      const StagePlan& st = pl.stages[s];
      std::vector<int> blocks;
      for (int c = 0; c < v; ++c) {
        const std::vector<int> cb = stage_blocks(st, s, P, c, layers);
        blocks.insert(blocks.end(), cb.begin(), cb.end());
      }
      const std::vector<long> shares = replica_shares(plan, st, blocks, cluster_, work);
      StageTimes worst;
      const int held = static_cast<int>(in_flight_bound(plan.schedule, s, P, pl.micro_batches, v, extra_warmup(plan)));
      const double share = paired_share(pl.micro_batches * v, held);
      std::map<std::pair<int, long>, StageTimes> by_copy;  // (node type, samples): copies alike cost alike
      for (int j = 0; j < st.dp(); ++j) {
        const int dev = st.devices[j * st.group()];
        const int nt = cluster_.gpus[dev].node_type;
        auto found = by_copy.find({nt, shares[j]});
        if (found == by_copy.end()) found = by_copy.emplace(std::make_pair(nt, shares[j]), stage_times(plan, st, blocks, nt, shares[j], share)).first;
        StageTimes t = found->second;
        // The framework's host time once a pass of each chunk (the calibration profile's pass_host),
        // as the emitter writes it: forward, backward, and weight-gradient passes of their own.
        if (const double h = cluster_.node_types[nt].gpu.fitted.pass_host_s; h > 0) {
          t.f += h * v;
          t.b += h * v * (split_w ? 2 : 1);
          if (split_w) t.w += h * v;
        }
        if (ctx.tied_embedding_params > 0 && P > 1 && s == P - 1) {  // the last stage's copy of the embedding
          const double emb = ctx.tied_embedding_params / st.tp;
          t.params += emb;
          t.grad_bytes += emb * ctx.grad_bytes_per_param;
        }
        double gathered_held = 0;  // ZeRO-3: weights gathered at once, two blocks' (FSDP's prefetch)
        if (plan.gradient_sync == GradientSync::kZero3) {
          // Weights gathered from every copy before each forward and backward of each chunk: the block
          // run first (the last in a backward) exposed, the rest under the pass (add_zero3_gather).
          const std::vector<BlockWork>& bw = builder_.work(nt, stage_work_key(plan, shares[j], st));
          double first_f = 0, first_b = 0, largest = 0;
          for (int c = 0; c < v; ++c) {
            const std::vector<int> cb = stage_blocks(st, s, P, c, layers);
            first_f += bw[cb.front()].params;
            first_b += bw[cb.back()].params;
            for (int b : cb) largest = std::max(largest, bw[b].params);
          }
          const double w_bytes = ctx.weight_bytes_per_param;
          const double all = fit_time(holders[blocks.front()], t.params * w_bytes / v, CollectiveOp::kAllGather) * v;
          const double f_first = fit_time(holders[blocks.front()], first_f * w_bytes / v, CollectiveOp::kAllGather) * v;
          const double b_first = fit_time(holders[blocks.front()], first_b * w_bytes / v, CollectiveOp::kAllGather) * v;
          t.f += f_first + std::max(0.0, all - f_first - t.f);
          t.b += b_first + std::max(0.0, all - b_first - t.b);
          gathered_held = std::min(t.params / v, 2 * largest) * w_bytes;
        }
        if (t.f + t.b >= worst.f + worst.b) worst = t;
        // Memory of this copy's devices.
        const double copies = static_cast<double>(std::max<size_t>(1, holders[blocks.front()].size()));
        const double expert_copies = static_cast<double>(std::max<size_t>(1, expert_holders[blocks.front()].size()));
        const double state = ctx.state_bytes_per_param.at(static_cast<size_t>(nt));
        const double kept = ctx.held_weight_bytes_per_param + ctx.grad_bytes_per_param +
                            ctx.copy_bytes_per_param.at(static_cast<size_t>(nt));  // weights (and copies), gradients
        double static_bytes = t.params * state;
        if (plan.gradient_sync == GradientSync::kZero1) {
          static_bytes = t.params * kept + (t.params - t.expert_params) * (state - kept) / copies +
                         t.expert_params * (state - kept) / expert_copies;
        }
        if (plan.gradient_sync == GradientSync::kZero3) static_bytes = t.params * state / copies + gathered_held;
        // Zero-bubble holds back up to P weight-gradient passes, each keeping its inputs.
        const double deferred = split_w ? static_cast<double>(std::min<long>(P, pl.micro_batches)) * t.weight_input_per_mb : 0;
        const double need = static_bytes + ctx.reserve_bytes + held * t.saved_per_mb / v + deferred + t.recompute_bytes;
        const Device& d = cluster_.device_of(dev);
        const double ratio = need / d.memory_bytes;
        if (ratio > out.worst_memory_ratio) out.worst_memory_ratio = ratio;
        if (need > d.memory_bytes && out.fits) {
          out.fits = false;
          out.reason = "gpu" + std::to_string(dev) + " (" + d.name + ") needs about " + format_bytes(need) + " but has " +
                       format_bytes(d.memory_bytes);
        }
        if (d.host_link.memory_bytes > 0 && t.offload_per_mb > d.host_link.memory_bytes && out.fits) {
          out.fits = false;
          out.reason = offload_shortfall_text(dev, d, t.offload_per_mb);
        }
        opt = std::max(opt, optimizer_s(nt, plan.gradient_sync == GradientSync::kAllReduce ? t.params : t.params / copies));
      }
      const double ts = worst.f + worst.b;
      stage_t[s] = ts;
      sum_t += ts;
      max_t = std::max(max_t, ts);
      sum_tw += ts - worst.w;
      max_w = std::max(max_w, worst.w);
      bwd[s] = worst.b;
      sum_b += worst.b;
      const CollectiveOp op = plan.gradient_sync == GradientSync::kAllReduce ? CollectiveOp::kAllReduce : CollectiveOp::kReduceScatter;
      const double g = ctx.grad_bytes_per_param;
      // One collective per bucket, each paying the latency (the ring's steps): at thousands of
      // copies that, not the bytes, grows.
      sync[s] = fit_time(holders[blocks.front()], worst.grad_bytes - worst.expert_params * g, op, worst.buckets) +
                fit_time(expert_holders[blocks.front()], worst.expert_params * g, op, worst.expert_buckets);
      fwd[s] = worst.f;
      if (plan.gradient_sync == GradientSync::kZero1) {
        const double bytes = worst.params * ctx.weight_bytes_per_param;
        const double all = fit_time(holders[blocks.front()], bytes, CollectiveOp::kAllGather, worst.buckets + worst.expert_buckets);
        if (plan.overlap_param_gather) {
          // Issued at the start in forward order: the first bucket's before the first forward,
          // the rest under it.
          gather_all[s] = all;
          gather_first[s] = fit_time(holders[blocks.front()], std::min(bytes, ctx.bucket_params * ctx.weight_bytes_per_param),
                                     CollectiveOp::kAllGather);
        } else {
          sync[s] += all;
        }
      }
      if (s + 1 < P) {
        const StagePlan& next = pl.stages[s + 1];
        // Every tensor crossing the cut after this stage's last block (skip connections too),
        // for a non-interleaved pipeline; interleaved chunks cut like the first block's output.
        const std::vector<BlockWork>& w = builder_.work(cluster_.gpus[st.devices[0]].node_type,
                                                        stage_work_key(plan, plan.micro_batch, st));
        double bytes = w[1].output_bytes;
        if (v == 1) {
          bytes = 0;
          for (int b = 0; b <= blocks.back(); ++b) {
            for_each_consumer(w, b, [&](int c, double cb) {
              if (c > blocks.back()) bytes += cb;
            });
          }
        }
        const double copy = bytes / std::max(1, next.dp());
        cut[s] = boundary_time(plan, st, next, copy);
        sum_c += cut[s];
      }
    }
    // Eager 1F1B runs later micro-batches' forwards while a forward transfer is in flight: the
    // forward transfers leave the critical path when issued as soon as produced.
    const double comm_passes = plan.schedule == PipelineSchedule::kEager && plan.resharding.overlap ? 1 : 2;
    // The steady state's period: the slowest stage's passes, and at least each cut's transfers of
    // one micro-batch (v per chunk round trip; a link carries every micro-batch across it, each
    // way). Under plain 1F1B a stage's next pass waits for its neighbour's output, so the period of
    // two neighbours is their mean passes plus the cut's transfer (measured: a 2-stage BERT-base
    // pipeline on 10 Gbit/s NICs, stages of 4.14 and 4.64 ms, a 0.68 ms cut: 329 ms simulated,
    // 63 x (4.39 + 0.68) + fill; eager 1F1B's early forwards leave it hidden, as interleaving's
    // and zero-bubble's deeper warm-ups do).
    double period = max_t;
    for (int s = 0; s + 1 < P; ++s) {
      period = std::max(period, cut[s] * v);
      if (plan.schedule == PipelineSchedule::kOneFOneB && v == 1) period = std::max(period, (stage_t[s] + stage_t[s + 1]) / 2 + cut[s]);
    }
    double pipe = (m - 1) * period + comm_passes * sum_c * v;
    pipe += split_w ? sum_tw + max_w : sum_t / v + max_t * (1 - 1.0 / v);
    // Stage s finishes its last backward about s average backward passes before stage 0; its
    // buckets also overlap that last backward unless they wait for it (grad_sync_overlap false).
    const double mean_b = P > 0 ? sum_b / P : 0;
    double mean_f = 0;
    for (int s = 0; s < P; ++s) mean_f += P > 0 ? fwd[s] / P : 0;
    double gather_exposed = 0;
    for (int s = 0; s < P; ++s) {
      const double hidden = (plan.grad_sync_overlap ? bwd[s] / v : 0) + s * mean_b / v;
      exposed = std::max(exposed, sync[s] - hidden);
      // Stage s starts its first forward about s forwards after stage 0.
      const double ahead = s * mean_f / v;
      gather_exposed = std::max(gather_exposed, std::max(0.0, gather_first[s] - ahead) +
                                                    std::max(0.0, gather_all[s] - gather_first[s] - fwd[s] / v - ahead));
    }
    exposed += gather_exposed + tied_sync;
    out.time_s = std::max(out.time_s, pipe + exposed + opt);
  }
  return out;
}

std::vector<StageLayerCost> HybridEstimator::layer_costs(const HybridPlan& plan, int p) {
  builder_.prepare(plan);
  const PipelineContext& ctx = builder_.context();
  const PipelinePlan& pl = plan.pipelines[p];
  const int P = static_cast<int>(pl.stages.size());
  const int layers = static_cast<int>(model_.layers);
  std::vector<StageLayerCost> out(P);
  for (int s = 0; s < P; ++s) {
    const StagePlan& st = pl.stages[s];
    const int held = static_cast<int>(in_flight_bound(plan.schedule, s, P, pl.micro_batches, 1, extra_warmup(plan)));
    const double share = paired_share(pl.micro_batches, held);
    StageLayerCost& c = out[s];
    c.free_bytes = 1e300;
    double worst = -1;
    // The slowest data-parallel copy sets the stage's pace; every copy's memory must fit.
    // Copies on one node type run the same work: costed once per type.
    const long samples = std::max(1L, plan.micro_batch / st.dp());
    std::vector<int> all(layers);
    for (int l = 0; l < layers; ++l) all[l] = l + 1;
    std::vector<int> fixed;
    if (s == 0) fixed.push_back(0);
    if (s == P - 1) fixed.push_back(layers + 1);
    std::map<int, std::pair<StageTimes, StageTimes>> by_type;  // node type -> (layers, fixed blocks)
    for (int j = 0; j < st.dp(); ++j) {
      const int dev = st.devices[j * st.group()];
      const int nt = cluster_.gpus[dev].node_type;
      auto it = by_type.find(nt);
      if (it == by_type.end()) {
        it = by_type.emplace(nt, std::make_pair(stage_times(plan, st, all, nt, samples, share), stage_times(plan, st, fixed, nt, samples, share))).first;
      }
      const StageTimes& layer = it->second.first;
      const StageTimes& fx = it->second.second;
      const double layer_s = (layer.f + layer.b) / layers;
      if (layer_s > worst) {
        worst = layer_s;
        c.layer_s = layer_s;
        c.fixed_s = fx.f + fx.b + cluster_.node_types[nt].gpu.fitted.pass_host_s * (splits_weight_gradient(plan.schedule) ? 3 : 2);
      }
      const double state = ctx.state_bytes_per_param.at(static_cast<size_t>(nt));
      const double deferred = splits_weight_gradient(plan.schedule) ? static_cast<double>(std::min<long>(P, pl.micro_batches)) : 0;
      const double layer_bytes = layer.params / layers * state + (held * layer.saved_per_mb + deferred * layer.weight_input_per_mb) / layers;
      const double free = cluster_.device_of(dev).memory_bytes - ctx.reserve_bytes - fx.params * state -
                          held * fx.saved_per_mb - layer.recompute_bytes;
      c.layer_bytes = std::max(c.layer_bytes, layer_bytes);
      c.free_bytes = std::min(c.free_bytes, free);
    }
  }
  return out;
}

}  // namespace hetsim
