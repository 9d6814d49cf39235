// File: planner/hybrid/hybrid_planner.cpp
#include "planner/hybrid/hybrid_planner.hpp"

#include "planner/hybrid/pipeline_schedule.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <stdexcept>

#include "base/progress.hpp"

namespace hetsim {

// One shape of the search: how GPUs form stages and pipelines, before micro-batches, schedule,
// recompute and layers are chosen.
struct HybridPlanner::Shape {
  std::vector<int> type_order;  // node types, first stage's type first
  std::vector<int> tp;          // per node type
  int pipelines = 1;
  bool mixed = false;           // every stage one TP group of each type (data parallel inside)
  bool cluster_order = false;   // Megatron: TP groups of all types in cluster order, stage-major
  int cp = 1;                   // context parallelism: each stage is cp TP groups of its type
  int copies = 1;               // mixture of experts: each stage is `copies` data-parallel copies (of cp TP
                                // groups) whose GPUs an expert group of ep = copies x cp x tp spans
};

HybridPlanner::HybridPlanner(const ModelSpec& model, const Cluster& cluster, const CostModel& cost, const SimOptions& sim)
    : model_(model), cluster_(cluster), cost_(cost), sim_(sim), builder_(model, cluster, cost),
      estimator_(model, cluster, builder_) {
  builder_.set_fold_rounds(!sim.every_step);
  builder_.set_mirror_pipelines(!sim.every_replica);
}

namespace {

// TP widths a node type can use: powers of two that tile its NVLink domains (a node, or a
// rack-scale domain: every domain of the type, the last one too, splits into whole TP groups) and
// divide the attention heads.
std::vector<int> tp_widths(const NodeType& nt, const ModelSpec& m) {
  std::vector<int> out;
  const long type_gpus = static_cast<long>(nt.count) * nt.gpus_per_node;
  for (int tp = 1; tp <= nt.nvlink_domain; tp *= 2) {
    if (nt.nvlink_domain % tp != 0 || type_gpus % tp != 0) continue;
    if (m.heads > 0 && m.heads % tp != 0) continue;
    if (m.kv_heads > 0 && m.kv_heads % tp != 0) continue;
    if (m.mamba && (m.mamba->groups % tp != 0 || m.mamba->heads % tp != 0)) continue;  // Megatron's MambaMixer asserts both
    out.push_back(tp);
  }
  return out;
}

// Groups of `size` GPUs of node type t (a TP group, or a stage of TP groups): consecutive runs from
// the type's first GPU, inside its GPUs only (a remainder that makes no whole group is left out).
// Types start at a node and an NVLink domain, and TP widths divide the domain: the TP groups inside
// never straddle one.
std::vector<std::vector<int>> tp_groups(const Cluster& c, int t, int size) {
  std::vector<std::vector<int>> out;
  int first = 0;
  while (first < c.gpu_count() && c.gpus[first].node_type != t) ++first;
  const int end = first + c.node_types[t].count * c.node_types[t].gpus_per_node;
  for (int g = first; g + size <= end; g += size) {
    std::vector<int> group(size);
    std::iota(group.begin(), group.end(), g);
    out.push_back(group);
  }
  return out;
}

// Data-parallel copies per stage to try for a model with routed experts, so that one expert group
// (ep = copies x cp x tp GPUs, every expert once) spans a stage: 1, and powers of two while ep divides
// the experts and stays within 64 (Megatron-Core's published recipes use EP 8 to 64). Dense: 1.
std::vector<int> expert_copies(const ModelSpec& m, const HybridOptions& options, int group) {
  std::vector<int> out{1};
  if (!m.moe || !options.moe_parallel) return out;
  for (int k = 2; k * group <= 64; k *= 2) {
    if (m.moe->experts % (k * group) == 0) out.push_back(k);
  }
  return out;
}

// Context-parallel widths to try: 1, and for sequences of 8192 tokens or more (where Megatron-Core's
// recipes start to use it) the powers of two up to 8 that cut the sequence in 2 x cp chunks; under a
// sliding window (all-to-all) only those that split every TP group's key/value heads evenly; none for
// a model with Mamba layers (their context parallelism is not modelled).
std::vector<int> cp_widths(const ModelSpec& m, const HybridOptions& options, const std::vector<int>& tp) {
  std::vector<int> out{1};
  if (!options.context_parallel || m.seq_len < 8192 || m.family == Family::kUnet || m.family == Family::kVgg || m.mamba) return out;
  for (int cp = 2; cp <= 8; cp *= 2) {
    if (m.seq_len % (2L * cp) != 0) continue;
    const bool heads_split = std::all_of(tp.begin(), tp.end(), [&](int t) { return t < 1 || (m.kv_heads / t) % cp == 0; });
    if (!has_sliding_window(m) || heads_split) out.push_back(cp);
  }
  return out;
}

std::vector<int> divisors(int n) {
  std::vector<int> out;
  for (int d = 1; d <= n; ++d) {
    if (n % d == 0) out.push_back(d);
  }
  return out;
}

}  // namespace

std::vector<HybridPlan> HybridPlanner::enumerate(HybridFlavour flavour, const HybridOptions& options) {
  std::vector<int> types;
  for (int t = 0; t < static_cast<int>(cluster_.node_types.size()); ++t) {
    if (cluster_.node_types[t].count > 0) types.push_back(t);
  }
  // Every combination of per-type TP widths (one shared width for Megatron-uniform).
  std::vector<std::vector<int>> tps{std::vector<int>(cluster_.node_types.size(), 0)};
  for (int t : types) {
    std::vector<std::vector<int>> next;
    for (const std::vector<int>& base : tps) {
      for (int w : tp_widths(cluster_.node_types[t], model_)) {
        if (flavour == HybridFlavour::kMegatronUniform && t != types.front() && w != base[types.front()]) continue;
        std::vector<int> v = base;
        v[t] = w;
        next.push_back(v);
      }
    }
    tps = std::move(next);
  }
  // The shapes first, then their plans estimated shape by shape (in the same order), with a bar
  // where the search takes long (DeepSeek-V3 on 1024 GPUs: about 10 s).
  std::vector<Shape> shapes;
  for (const std::vector<int>& tp : tps) {
    std::vector<int> groups;
    for (int t : types) groups.push_back(cluster_.node_types[t].count * cluster_.node_types[t].gpus_per_node / tp[t]);
    if (flavour == HybridFlavour::kMegatronUniform) {
      const int total = std::accumulate(groups.begin(), groups.end(), 0);
      for (int d : divisors(total)) {
        if (total / d > model_.layers) continue;
        shapes.push_back(Shape{types, tp, d, false, true});
      }
      continue;
    }
    const bool hetsim = flavour == HybridFlavour::kHetsim;
    std::vector<int> type_tp;
    for (int t : types) type_tp.push_back(tp[t]);
    for (int cp : hetsim ? cp_widths(model_, options, type_tp) : std::vector<int>{1}) {
      // Experts: one TP width for all types (an expert group's copies run in lockstep, one type each).
      const bool one_tp = std::all_of(types.begin(), types.end(), [&](int t) { return tp[t] == tp[types[0]]; });
      for (int k : hetsim && one_tp ? expert_copies(model_, options, tp[types[0]] * cp) : std::vector<int>{1}) {
        if (std::any_of(groups.begin(), groups.end(), [&](int n) { return n % (cp * k) != 0; })) continue;
        int g = 0;
        for (int n : groups) g = std::gcd(g, n / cp / k);
        std::vector<int> order = types;
        do {
          for (int d : divisors(g)) {
            int stages = 0;
            for (int n : groups) stages += n / cp / k / d;
            if (stages <= model_.layers) shapes.push_back(Shape{order, tp, d, false, false, cp, k});
          }
        } while (std::next_permutation(order.begin(), order.end()));
      }
    }
    // Mixed stages: one TP group of every type per stage, the micro-batch split by speed.
    const bool same = std::all_of(groups.begin(), groups.end(), [&](int n) { return n == groups[0]; }) &&
                      std::all_of(types.begin(), types.end(), [&](int t) { return tp[t] == tp[types[0]]; });
    if (flavour == HybridFlavour::kHetsim && options.mixed_stages && types.size() > 1 && same) {
      for (int d : divisors(groups[0])) {
        if (groups[0] / d <= model_.layers) shapes.push_back(Shape{types, tp, d, true, false});
      }
    }
  }
  std::vector<HybridPlan> out;
  Progress bar(shapes.size(), "pipeline shapes estimated", kProgressAfterS);
  for (size_t i = 0; i < shapes.size(); ++i) {
    add_plans(shapes[i], flavour, options, out);
    bar.update(i + 1);
  }
  bar.finish();
  return out;
}

void HybridPlanner::add_plans(const Shape& shape, HybridFlavour flavour, const HybridOptions& options,
                              std::vector<HybridPlan>& out) {
  // Stages of every pipeline, from the TP groups of each type.
  std::vector<std::vector<StagePlan>> pipes(shape.pipelines);
  const int d = shape.pipelines;
  if (shape.cluster_order) {
    std::vector<std::vector<int>> all;
    for (int t : shape.type_order) {
      for (auto& g : tp_groups(cluster_, t, shape.tp[t])) all.push_back(g);
    }
    for (size_t k = 0; k < all.size(); ++k) pipes[k % d].push_back(StagePlan{all[k], shape.tp[shape.type_order[0]], {}});
  } else if (shape.mixed) {
    std::vector<std::vector<std::vector<int>>> by_type;
    for (int t : shape.type_order) by_type.push_back(tp_groups(cluster_, t, shape.tp[t]));
    for (size_t k = 0; k < by_type[0].size(); ++k) {
      StagePlan st;
      st.tp = shape.tp[shape.type_order[0]];
      for (const auto& groups : by_type) st.devices.insert(st.devices.end(), groups[k].begin(), groups[k].end());
      pipes[k % d].push_back(st);
    }
  } else {
    for (int t : shape.type_order) {
      // A stage: `copies` copies of cp consecutive TP groups (one TP group without context or expert
      // parallelism); with copies > 1 one expert group spans it.
      const std::vector<std::vector<int>> groups = tp_groups(cluster_, t, shape.tp[t] * shape.cp * shape.copies);
      for (size_t k = 0; k < groups.size(); ++k) {
        StagePlan st{groups[k], shape.tp[t], {}, shape.cp};
        if (shape.copies > 1) st.ep = static_cast<int>(groups[k].size());
        pipes[k % d].push_back(st);
      }
    }
  }
  for (const std::vector<StagePlan>& pipe : pipes) {  // every stage inside the cluster, on one type unless mixed
    for (const StagePlan& st : pipe) {
      for (int g : st.devices) {
        if (g >= cluster_.gpu_count() || (!shape.mixed && cluster_.gpus[g].node_type != cluster_.gpus[st.devices.front()].node_type)) {
          throw std::logic_error("HybridPlanner: a stage of " + std::to_string(st.devices.size()) + " GPUs from GPU " +
                                 std::to_string(st.devices.front()) + " leaves its node type");
        }
      }
    }
  }
  const int P = static_cast<int>(pipes[0].size());
  const long global = model_.training.global_batch;
  std::vector<PipelineSchedule> schedules{PipelineSchedule::kOneFOneB};
  if (flavour == HybridFlavour::kHetsim) {
    if (options.schedule) schedules = {*options.schedule};
    else schedules = {PipelineSchedule::kOneFOneB, PipelineSchedule::kInterleaved, PipelineSchedule::kZeroBubble};
    // Eager 1F1B differs from 1F1B only across stages (its warm-up, 2(P - s) - 2 against P - s - 1
    // forwards, and the resharding between stages it overlaps): with one stage it is the same
    // program, which took a second place of the simulated best.
    if (!options.schedule && options.cross_mesh && P > 1) schedules.push_back(PipelineSchedule::kEager);
  }
  const bool uniform = flavour == HybridFlavour::kMegatronUniform || options.uniform_layers;
  const long min_mb = shape.mixed ? static_cast<long>(shape.type_order.size()) : 1;
  // Copies inside a stage split each micro-batch evenly (lockstep expert groups): multiples of them.
  const long k = shape.copies;
  const std::vector<long> per_rank = options.micro_batch > 0 ? std::vector<long>{options.micro_batch} : std::vector<long>{1, 2, 4};
  for (const long per : per_rank) {
    const long mb = k * per;
    if (mb < min_mb || global % mb != 0 || global / mb < d) continue;
    const long total = global / mb;
    HybridPlan plan;
    plan.model = model_.name;
    plan.cluster = cluster_.name;
    plan.micro_batch = mb;
    // Transformer Engine has no ring (p2p) kernel under a sliding window: all-to-all (Ulysses) there.
    plan.cp_comm = has_sliding_window(model_) ? CpComm::kAllToAll : CpComm::kRing;
    for (int p = 0; p < d; ++p) plan.pipelines.push_back({total / d + (p < total % d ? 1 : 0), pipes[p]});
    for (PipelineSchedule s : schedules) {
      const bool interleaved = s == PipelineSchedule::kInterleaved;
      if (interleaved && (P < 2 || std::any_of(plan.pipelines.begin(), plan.pipelines.end(),
                                               [&](const PipelinePlan& pl) { return pl.micro_batches % P != 0; }))) {
        continue;
      }
      plan.schedule = s;
      // Megatron's memory savers (sequence parallelism, the distributed optimizer) and the least
      // recompute that fits with them: the fastest combination by the estimate.
      const bool has_tp = std::any_of(plan.pipelines[0].stages.begin(), plan.pipelines[0].stages.end(),
                                      [](const StagePlan& st) { return st.tp > 1; });
      const bool copies = d > 1 || std::any_of(plan.pipelines[0].stages.begin(), plan.pipelines[0].stages.end(),
                                               [](const StagePlan& st) { return st.dp() > 1; });
      const bool hetsim = flavour == HybridFlavour::kHetsim;
      const bool has_ep = std::any_of(plan.pipelines[0].stages.begin(), plan.pipelines[0].stages.end(),
                                      [](const StagePlan& st) { return st.ep > 1; });
      std::vector<bool> sps{false}, a2a_overlaps{false};
      // Megatron-Core's token dispatchers where experts are split: the closed form keeps the fastest.
      std::vector<MoeDispatcher> dispatchers{MoeDispatcher::kAllToAll};
      if (hetsim && has_ep) dispatchers = {MoeDispatcher::kAllToAll, MoeDispatcher::kAllGather, MoeDispatcher::kFlex};
      if (has_ep && options.moe_dispatcher) dispatchers = {*options.moe_dispatcher};
      std::vector<int> overlaps{0};  // TP overlap: none, the backward's (1), userbuffers (2: with SP)
      std::vector<GradientSync> syncs{GradientSync::kAllReduce};
      if (hetsim && options.sequence_parallel && has_tp) sps.push_back(true);
      // Megatron-Core's combined 1F1B where experts are split (it holds one more micro-batch): with
      // more than one stage only interleaved, and never with full recompute, as Megatron-Core runs it
      // (docs/planner.md: without interleaving the stages' paired steps run one after another).
      if (hetsim && options.overlap && has_ep && !splits_weight_gradient(s) && (P == 1 || interleaved)) a2a_overlaps.push_back(true);
      if (hetsim && options.zero1 && copies) syncs.push_back(GradientSync::kZero1);
      if (hetsim && options.tp_comm_overlap && has_tp && !splits_weight_gradient(s)) overlaps = {0, 1, 2};
      // Recompute, least first: none, the attention core, then (hetsim's plans of MoE or latent-attention
      // models) the modules Megatron-Bridge's recipes for them recompute (norms, expert activations,
      // latent attention's up projections), then whole layers (the fewest per chunk that fit).
      std::vector<std::pair<RecomputeMode, RecomputeModules>> recomputes{{RecomputeMode::kNone, kDefaultRecomputeModules},
                                                                         {RecomputeMode::kSelective, kDefaultRecomputeModules}};
      const bool pre_norm = model_.family == Family::kGpt || model_.family == Family::kLlama;
      if (hetsim && pre_norm && (model_.moe || model_.mla)) {
        RecomputeModules m = kDefaultRecomputeModules | static_cast<unsigned>(RecomputeModule::kLayernorm);
        if (model_.moe) m |= static_cast<unsigned>(RecomputeModule::kMoeAct);
        if (model_.mla) m |= static_cast<unsigned>(RecomputeModule::kMlaUpProj);
        recomputes.emplace_back(RecomputeMode::kSelective, m);
      }
      recomputes.emplace_back(RecomputeMode::kFull, kDefaultRecomputeModules);
      std::optional<HybridPlan> best;
      HybridEstimate e;
      for (bool sp : sps) {
        for (GradientSync sync : syncs) {
          for (size_t k = 0; k < overlaps.size() * a2a_overlaps.size() * dispatchers.size(); ++k) {
            if (overlaps[k % overlaps.size()] == 2 && !sp) continue;
            const size_t rest = k / overlaps.size();
            plan.moe_dispatcher = dispatchers[rest / a2a_overlaps.size()];
            if (plan.moe_dispatcher == MoeDispatcher::kAllGather && a2a_overlaps[rest % a2a_overlaps.size()]) continue;
            plan.sequence_parallel = sp;
            plan.gradient_sync = sync;
            plan.tp_comm_overlap = overlaps[k % overlaps.size()] > 0;
            plan.tp_comm_userbuffers = overlaps[k % overlaps.size()] == 2;
            plan.overlap_moe_expert_parallel_comm = a2a_overlaps[rest % a2a_overlaps.size()];
            // Megatron-Core's overlaps where the plan has them (--overlap-grad-reduce and
            // --overlap-param-gather in its performance recipes), unless the ablation turns them off.
            plan.grad_sync_overlap = options.overlap;
            plan.overlap_param_gather = hetsim && options.overlap && sync == GradientSync::kZero1;
            for (const auto& [r, modules] : recomputes) {
              if (r == RecomputeMode::kFull && plan.overlap_moe_expert_parallel_comm) continue;
              plan.recompute = r;
              plan.recompute_modules = modules;
              plan.recompute_layers = 0;
              plan.activation_offload_layers = 0;
              const bool split = split_layers(plan, uniform, interleaved ? 2 : 1);
              HybridEstimate pe;
              if (split) pe = estimator_.estimate(plan);
              if (r == RecomputeMode::kNone && hetsim && P == 1 && !splits_weight_gradient(s) && (!split || !pe.fits)) {
                // Activations of the first layers offloaded to host memory instead (as few as fit),
                // weighed against the recompute that fits next.
                HybridPlan offloaded = plan;
                for (PipelinePlan& pl : offloaded.pipelines) pl.stages.front().chunks = {{0, static_cast<int>(model_.layers) - 1}};
                HybridEstimate oe;
                if (least_offloaded_layers(offloaded, oe) && (!best || oe.time_s < e.time_s * (1 - 1e-9))) {
                  best = offloaded;
                  e = oe;
                }
              }
              if (!split || !pe.fits) continue;
              if (r == RecomputeMode::kFull && hetsim) least_recomputed_layers(plan, pe);
              if (!best || pe.time_s < e.time_s * (1 - 1e-9)) {
                best = plan;
                e = pe;
              }
              break;
            }
          }
        }
      }
      if (best) {
        plan = *best;
        plan.estimate_s = e.time_s;
        out.push_back(plan);
        // HAP inside the stages: the same plan with each TP group's layer program synthesised,
        // kept where it beats Megatron's (where the search finds Megatron's, it is the same plan).
        if (hetsim && options.stage_synthesis && has_tp) {
          HybridPlan twin = plan;
          twin.stage_program = StageProgram::kSynthesised;
          twin.sequence_parallel = false;
          twin.tp_comm_userbuffers = false;  // (they chunk sequence parallelism's collectives)
          const HybridEstimate te = estimator_.estimate(twin);
          if (te.fits && te.time_s < e.time_s * (1 - 1e-9)) {
            twin.estimate_s = te.time_s;
            out.push_back(twin);
          }
        }
        plan.stage_program = StageProgram::kMegatron;
        // Cross-mesh resharding: broadcasts from load-balanced senders (sender and order chosen
        // together), kept where they beat Megatron's scatter-gather (hosts with few NICs).
        if (hetsim && options.cross_mesh && P > 1) {
          HybridPlan twin = plan;
          twin.resharding.method = ReshardMethod::kBroadcast;
          twin.resharding.load_balance = LoadBalance::kOrder;
          const HybridEstimate te = estimator_.estimate(twin);
          if (te.fits && te.time_s < e.time_s * (1 - 1e-9)) {
            twin.estimate_s = te.time_s;
            out.push_back(twin);
          }
        }
        // The loss on all-gathered logits instead of vocabulary-parallel: kept only where faster.
        if (hetsim && has_tp) {
          HybridPlan twin = plan;
          twin.vocab_parallel = false;
          const HybridEstimate te = estimator_.estimate(twin);
          if (te.fits && te.time_s < e.time_s * (1 - 1e-9)) {
            twin.estimate_s = te.time_s;
            out.push_back(twin);
          }
        }
      }
    }
  }
}

// Under full recompute, the fewest layers of each model chunk recomputed (Megatron-Core's block method)
// with which the plan still fits: memory falls as layers are recomputed, time rises, so the least that
// fits is the fastest. Bisection over 1 .. the largest chunk's layers; `plan` and `e` take the result.
void HybridPlanner::least_recomputed_layers(HybridPlan& plan, HybridEstimate& e) {
  int most = 0;
  for (const PipelinePlan& pl : plan.pipelines) {
    for (const StagePlan& st : pl.stages) {
      for (const LayerRange& c : st.chunks) {
        if (c.part == ChunkPart::kLayers) most = std::max(most, c.last - c.first + 1);
      }
    }
  }
  HybridPlan trial = plan;
  trial.recompute_layers = 1;
  if (most <= 1 || !check_hybrid_plan(trial, model_, cluster_).empty()) return;  // pipelines not cut alike
  int lo = 1, hi = most;  // the answer is in [lo, hi]; `most` layers: every layer (fits, known)
  while (lo < hi) {
    const int mid = lo + (hi - lo) / 2;
    trial.recompute_layers = mid;
    if (estimator_.estimate(trial).fits) hi = mid;
    else lo = mid + 1;
  }
  if (lo >= most) return;
  plan.recompute_layers = lo;
  e = estimator_.estimate(plan);
}

// Without recompute, the fewest transformer layers whose activations are offloaded to host memory
// (HybridPlan::activation_offload_layers) with which the plan fits, by bisection: memory falls as layers
// are offloaded and time does not fall. False where even all but one do not fit, or the plan cannot
// offload (pipeline stages).
bool HybridPlanner::least_offloaded_layers(HybridPlan& plan, HybridEstimate& e) {
  const int most = static_cast<int>(main_layers(model_)) - 1;
  HybridPlan trial = plan;
  trial.activation_offload_layers = most;
  if (most < 1 || !check_hybrid_plan(trial, model_, cluster_).empty() || !estimator_.estimate(trial).fits) return false;
  int lo = 1, hi = most;  // the answer is in [lo, hi]
  while (lo < hi) {
    const int mid = lo + (hi - lo) / 2;
    trial.activation_offload_layers = mid;
    if (estimator_.estimate(trial).fits) hi = mid;
    else lo = mid + 1;
  }
  plan.activation_offload_layers = lo;
  e = estimator_.estimate(plan);
  return e.fits;
}

bool HybridPlanner::split_layers(HybridPlan& plan, bool uniform, int chunks) {
  const int L = static_cast<int>(model_.layers);
  const int P = static_cast<int>(plan.pipelines[0].stages.size());
  if (P * chunks > L) return false;
  // Split on the first pipeline (the one with the most micro-batches: the most activations
  // held); every pipeline gets the same split, so each layer's copies share one TP width.
  const std::vector<StageLayerCost> costs = estimator_.layer_costs(plan, 0);
  std::vector<int> cap(P);
  for (int s = 0; s < P; ++s) {
    const double c = costs[s].layer_bytes > 0 ? std::floor(costs[s].free_bytes / costs[s].layer_bytes) : L;
    cap[s] = static_cast<int>(std::clamp(c, -1.0, static_cast<double>(L)));
    if (cap[s] < chunks) return false;
  }
  std::vector<int> n(P);
  if (uniform) {
    for (int s = 0; s < P; ++s) {
      n[s] = L / P + (s < L % P ? 1 : 0);
      if (n[s] > cap[s] || n[s] < chunks) return false;
    }
  } else {
    // Smallest bottleneck T such that stage s can take min(cap, (T - fixed) / layer) layers and
    // they add up to L; then take surplus layers from the slowest stages.
    auto counts = [&](double T, std::vector<int>& out) {
      long sum = 0;
      for (int s = 0; s < P; ++s) {
        const double room = costs[s].layer_s > 0 ? (T - costs[s].fixed_s) / costs[s].layer_s : L;
        out[s] = static_cast<int>(std::min<double>(cap[s], std::floor(std::max(0.0, room) + 1e-9)));
        if (out[s] < chunks) return false;
        sum += out[s];
      }
      return sum >= L;
    };
    double lo = 0, hi = 0;
    for (const StageLayerCost& c : costs) hi = std::max(hi, c.fixed_s + L * c.layer_s);
    if (!counts(hi, n)) return false;
    for (int it = 0; it < 60; ++it) {
      const double mid = 0.5 * (lo + hi);
      std::vector<int> tmp(P);
      if (counts(mid, tmp)) hi = mid;
      else lo = mid;
    }
    (void)counts(hi, n);
    for (int sum = std::accumulate(n.begin(), n.end(), 0); sum > L; --sum) {
      int worst = -1;
      for (int s = 0; s < P; ++s) {
        if (n[s] <= chunks) continue;
        if (worst < 0 || costs[s].fixed_s + n[s] * costs[s].layer_s > costs[worst].fixed_s + n[worst] * costs[worst].layer_s) worst = s;
      }
      --n[worst];
    }
  }
  // Ranges in the order chunk by chunk, stage by stage: stage s holds ceil(n/v) layers in its
  // first chunk and the rest in the next.
  std::vector<std::vector<LayerRange>> ranges(P);
  int next = 0;
  for (int c = 0; c < chunks; ++c) {
    for (int s = 0; s < P; ++s) {
      const int first_part = (n[s] + chunks - 1) / chunks;
      const int size = c == 0 ? first_part : n[s] - first_part;
      ranges[s].push_back({next, next + size - 1});
      next += size;
    }
  }
  for (PipelinePlan& pl : plan.pipelines) {
    for (int s = 0; s < P; ++s) pl.stages[s].chunks = ranges[s];
  }
  return true;
}

}  // namespace hetsim
