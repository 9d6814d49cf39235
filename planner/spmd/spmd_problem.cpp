// File: planner/spmd/spmd_problem.cpp
#include "planner/spmd/spmd_problem.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "planner/block_costs.hpp"
#include "sim/collective.hpp"

namespace hetsim {

namespace {

// Alpha-beta fit of a collective over all GPUs from the estimates of the algorithm the simulator
// would choose at two sizes.
CollectiveCost fit_collective(CollectiveOp op, const Cluster& c, const Fabric& fabric) {
  std::vector<int> all(c.gpu_count());
  for (int g = 0; g < c.gpu_count(); ++g) all[g] = g;
  if (all.size() < 2) return {};
  const AlphaBetaFit f = fit_alpha_beta(op, all, c, fabric, 16.0 * 1024 * 1024, 256.0 * 1024 * 1024);
  return {f.alpha_s, f.beta_s_per_byte};
}

// The op of `unfused` (the graph a GPU type without a fused attention kernel runs) that `op` of
// the fused graph stands for: the same op by name; a fused attention core, the unfused core's ops
// (QK^T, softmax, dropout, PV) of its layer. Empty where the graphs differ otherwise.
std::vector<const Op*> unfused_counterparts(const Op& op, const std::unordered_map<std::string, const Op*>& unfused) {
  std::vector<const Op*> out;
  if (op.kind == OpKind::kFlashAttention) {
    const std::string prefix = op.name.substr(0, op.name.size() - std::string_view("attention").size());
    for (const char* part : {"attn_scores", "softmax", "attn_dropout", "attn_context"}) {
      if (const auto it = unfused.find(prefix + part); it != unfused.end()) out.push_back(it->second);
    }
    if (out.size() < 3) out.clear();  // scores, softmax and context at least
  } else if (const auto it = unfused.find(op.name); it != unfused.end()) {
    out.push_back(it->second);
  }
  return out;
}

// Per GPU type, the ops of `g` each type runs: the ops themselves where the type runs the graph's
// attention kernel; for a type without a fused attention kernel beside types with one, the unfused
// graph's counterparts. One SPMD program runs one operator graph on every GPU, but each GPU runs its
// own kernel for an op (an A100 the fused attention core, a V100 the unfused one). Empty where the
// two graphs cannot be matched op for op: every type then runs `g` as built.
std::vector<std::vector<std::vector<const Op*>>> kernels_by_type(const OpGraph& g, const OpGraph* unfused, const Cluster& cluster) {
  std::vector<std::vector<std::vector<const Op*>>> by_type;
  if (unfused == nullptr) return by_type;
  std::unordered_map<std::string, const Op*> names;
  for (const Op& op : unfused->ops) names.emplace(op.name, &op);
  std::vector<std::vector<const Op*>> fallback;
  size_t matched = 0;
  for (const Op& op : g.ops) {
    fallback.push_back(unfused_counterparts(op, names));
    if (fallback.back().empty()) return {};
    matched += fallback.back().size();
  }
  if (matched != unfused->ops.size()) return {};  // every unfused op accounted for once
  for (const NodeType& nt : cluster.node_types) {
    if (nt.gpu.flash_attention) {
      std::vector<std::vector<const Op*>> own;
      for (const Op& op : g.ops) own.push_back({&op});
      by_type.push_back(std::move(own));
    } else {
      by_type.push_back(fallback);
    }
  }
  return by_type;
}

// The graph one SPMD program runs for `batch` samples and, where GPU types with and without a
// fused attention kernel mix, the unfused graph and the ops each type runs (kernels_by_type).
struct TypedGraph {
  OpGraph built;
  std::optional<OpGraph> unfused;
  std::vector<std::vector<std::vector<const Op*>>> kernels;  // empty: every type runs graph()
  // Unmatched: the unfused graph everywhere.
  [[nodiscard]] const OpGraph& graph() const { return unfused && kernels.empty() ? *unfused : built; }
};

TypedGraph typed_graph(const ModelSpec& model, long batch, DType dtype, bool mixed, const KernelSupport& every, const Cluster& cluster) {
  TypedGraph t{build_op_graph(model, batch, dtype, mixed ? KernelSupport{true} : every), std::nullopt, {}};
  if (mixed) t.unfused = build_op_graph(model, batch, dtype, every);
  t.kernels = kernels_by_type(t.built, t.unfused ? &*t.unfused : nullptr, cluster);
  return t;
}

// Whether `a` and `b` (one model at two batch sizes) hold the same ops, each type running as many.
bool same_ops(const TypedGraph& a, const TypedGraph& b) {
  const OpGraph &ga = a.graph(), &gb = b.graph();
  if (ga.ops.size() != gb.ops.size() || a.kernels.size() != b.kernels.size()) return false;
  for (size_t i = 0; i < ga.ops.size(); ++i) {
    if (ga.ops[i].name != gb.ops[i].name) return false;
  }
  for (size_t t = 0; t < a.kernels.size(); ++t) {
    for (size_t i = 0; i < a.kernels[t].size(); ++i) {
      if (a.kernels[t][i].size() != b.kernels[t][i].size()) return false;
    }
  }
  return true;
}

}  // namespace

SpmdProblem build_spmd_problem(const ModelSpec& model, const Cluster& cluster, const CostModel& cost,
                               MixedAttention mixed_attention) {
  const DType dtype = resolve_dtype(model, cluster);
  // One global micro-batch gives every device about the model's micro-batch; the iteration runs
  // it as many times as the global batch needs (gradient accumulation).
  const long global = model.training.global_batch;
  const long micro = std::min(global, static_cast<long>(cluster.gpu_count()) * model.training.micro_batch);
  // GPU types with a fused attention kernel beside types without: the graph of the fused ones, each
  // type costed with its own kernels.
  const bool some_fused = std::any_of(cluster.node_types.begin(), cluster.node_types.end(),
                                      [](const NodeType& nt) { return nt.gpu.flash_attention; });
  const KernelSupport every = cluster_kernel_support(cluster);
  const bool mixed = mixed_attention == MixedAttention::kPerGpuType && some_fused && !every.flash_attention &&
                     uses_flash_attention(model.training, true);
  const TypedGraph whole = typed_graph(model, micro, dtype, mixed, every, cluster);
  const OpGraph& graph = whole.graph();
  const auto& kernels = whole.kernels;
  // Times are linear in a device's share (HAP's model), but taken at the shape a device runs: the
  // graph of an even split's slice (each GPU's micro-batch), scaled to the global micro-batch. The
  // global micro-batch's own GEMMs are larger than any GPU's and reach a higher efficiency (wave
  // quantisation), which made an SPMD program's data-parallel step 7-10 % cheaper than the same
  // step costed as data parallelism or a pipeline costs it. Where the two graphs do not match op
  // for op, the global graph's times stand.
  const long slice = std::max(1L, micro / static_cast<long>(cluster.gpu_count()));
  std::optional<TypedGraph> part;
  if (slice < micro) {
    part = typed_graph(model, slice, dtype, mixed, every, cluster);
    if (!same_ops(*part, whole)) part.reset();
  }
  const TypedGraph& costed_graphs = part ? *part : whole;
  const double scale = part ? static_cast<double>(micro) / static_cast<double>(slice) : 1.0;
  SpmdProblem p;
  p.devices = cluster.gpu_count();
  p.accumulation = static_cast<double>(global) / static_cast<double>(micro);
  p.samples = global;
  for (const GpuSlot& s : cluster.gpus) p.type_of.push_back(s.node_type);
  for (const NodeType& nt : cluster.node_types) p.pass_host_s.push_back(nt.gpu.fitted.pass_host_s);
  const double e = dtype_bytes(dtype);
  for (size_t i = 0; i < graph.ops.size(); ++i) {
    const Op& op = graph.ops[i];
    SpmdOp s;
    s.name = op.name;
    s.kind = op.kind;
    s.inputs = op.inputs;
    for (size_t t = 0; t < cluster.node_types.size(); ++t) {
      const Device& gpu = cluster.node_types[t].gpu;
      double fwd_s = 0, bwd_s = 0, saved = 0;
      std::array<double, kCostSources> src{};
      for (const Op* k : kernels.empty() ? std::vector<const Op*>{&op} : kernels[t][i]) saved += k->saved_bytes;
      const auto& by_type = costed_graphs.kernels;
      for (const Op* k : by_type.empty() ? std::vector<const Op*>{&costed_graphs.graph().ops[i]} : by_type[t][i]) {
        const OpCost fwd = cost.op_time(gpu, *k, dtype, Pass::kForward);
        const OpCost bwd = cost.op_time(gpu, *k, dtype, Pass::kBackward);
        fwd_s += fwd.seconds;
        bwd_s += bwd.seconds;
        for (int c = 0; c < kCostSources; ++c) src[c] += scale * (fwd.by_source[c] + bwd.by_source[c]);
      }
      s.time_s.push_back(scale * (fwd_s + bwd_s));
      s.bwd_s.push_back(scale * bwd_s);
      s.sources.push_back(src);
      s.saved_bytes.push_back(saved);
      s.param_state_bytes.push_back(op.params * state_bytes_per_param(model, dtype, gpu.fp8_any_layout));
    }
    double elems = 1;
    for (long d : op.shape) elems *= static_cast<double>(d);
    s.output_bytes = elems * e;
    s.param_elems = op.params;
    s.param_bytes = op.params * e;
    s.rules = rules_for(op);
    if (micro < p.devices) {
      // Fewer samples than devices: a batch split would run fractions of a sample (HAP's shares
      // are continuous); such programs split features, heads or experts, or replicate.
      std::erase_if(s.rules, [](const Rule& r) { return r.name == "data"; });
    }
    p.ops.push_back(std::move(s));
  }
  const Fabric fabric(cluster);
  p.all_gather = fit_collective(CollectiveOp::kAllGather, cluster, fabric);
  p.reduce_scatter = fit_collective(CollectiveOp::kReduceScatter, cluster, fabric);
  p.all_reduce = fit_collective(CollectiveOp::kAllReduce, cluster, fabric);
  p.all_to_all = fit_collective(CollectiveOp::kAllToAll, cluster, fabric);
  for (int d = 0; d < p.devices; ++d) p.memory_capacity.push_back(cluster.device_of(d).memory_bytes - kRuntimeReserveBytes);
  return p;
}

std::vector<double> speed_ratios(const SpmdProblem& p) {
  std::vector<double> type_time(p.ops.empty() ? 0 : p.ops.front().time_s.size(), 0.0);
  for (const SpmdOp& op : p.ops) {
    for (size_t t = 0; t < type_time.size(); ++t) type_time[t] += op.time_s[t];
  }
  std::vector<double> r(p.devices);
  double sum = 0;
  for (int d = 0; d < p.devices; ++d) sum += r[d] = 1 / type_time[p.type_of[d]];
  for (double& x : r) x /= sum;
  return r;
}

}  // namespace hetsim
