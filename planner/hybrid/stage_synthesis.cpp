// File: planner/hybrid/stage_synthesis.cpp
#include "planner/hybrid/stage_synthesis.hpp"

#include <algorithm>

#include "planner/spmd/sharding.hpp"
#include "planner/spmd/spmd_planner.hpp"

namespace hetsim {

namespace {

Rule passthrough(std::vector<Layout> inputs) {
  Rule r;
  r.name = "replicated";
  r.inputs = std::move(inputs);
  r.output = replicated();
  return r;
}

// The search problem of one layer: a zero-cost "input" (replicated), the layer's operators with
// their full-slice times on this GPU type, and a zero-cost "output" that needs its input
// replicated. `index` maps graph operators to problem operators.
struct LayerProblem {
  SpmdProblem problem;
  std::vector<const Op*> ops;  // problem index -> graph operator (null for input and output)
};

LayerProblem layer_problem(const OpGraph& g, const Device& device, DType dtype, const CostModel& cost, int tp,
                           long granularity, const GroupCollectives& comm) {
  LayerProblem lp;
  SpmdProblem& p = lp.problem;
  p.devices = tp;
  p.accumulation = 1;
  p.samples = granularity;
  p.type_of.assign(static_cast<size_t>(tp), 0);
  p.all_gather = comm.all_gather;
  p.reduce_scatter = comm.reduce_scatter;
  p.all_reduce = comm.all_reduce;
  p.all_to_all = comm.all_to_all;
  const double e = dtype_bytes(dtype);

  std::vector<int> index(g.ops.size(), 0);  // graph op -> problem op; 0 (the input) outside the layer
  auto zero_op = [&](std::string name, std::vector<int> inputs, Rule rule, double bytes) {
    SpmdOp s;
    s.name = std::move(name);
    s.kind = OpKind::kActivation;
    s.inputs = std::move(inputs);
    s.time_s = {0};
    s.bwd_s = {0};
    s.sources = {{}};
    s.saved_bytes = {0};
    s.param_state_bytes = {0};
    s.output_bytes = bytes;
    s.rules = {std::move(rule)};
    p.ops.push_back(std::move(s));
    lp.ops.push_back(nullptr);
  };
  double hidden_bytes = 0;
  zero_op("input", {}, passthrough({}), 0);
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const Op& op = g.ops[i];
    if (op.layer != 0) continue;
    SpmdOp s;
    s.name = op.name;
    s.kind = op.kind;
    for (int in : op.inputs) s.inputs.push_back(index[in]);
    const OpCost fwd = cost.op_time(device, op, dtype, Pass::kForward);
    const OpCost bwd = cost.op_time(device, op, dtype, Pass::kBackward);
    s.time_s = {fwd.seconds + bwd.seconds};
    s.bwd_s = {bwd.seconds};
    std::array<double, kCostSources> src{};
    for (int k = 0; k < kCostSources; ++k) src[k] = fwd.by_source[k] + bwd.by_source[k];
    s.sources = {src};
    double elems = 1;
    for (long d : op.shape) elems *= static_cast<double>(d);
    s.output_bytes = elems * e;
    s.param_elems = op.params;
    s.param_bytes = op.params * e;
    s.saved_bytes = {op.saved_bytes};
    s.param_state_bytes = {0};  // the layer's sharding alone: the pipeline weighs the model state
    for (Rule& r : rules_for(op)) {
      // No weights replicated over split data inside the group (that is the data-parallel axis).
      if (r.gradient_sync || r.params == ParamPlacement::kGathered) continue;
      s.rules.push_back(std::move(r));
    }
    index[i] = static_cast<int>(p.ops.size());
    hidden_bytes = s.output_bytes;
    p.ops.push_back(std::move(s));
    lp.ops.push_back(&op);
  }
  // The layer's input is the previous block's output: one [batch, seq, hidden] tensor.
  p.ops.front().output_bytes = hidden_bytes;
  zero_op("output", {static_cast<int>(p.ops.size()) - 1}, passthrough({replicated()}), hidden_bytes);
  return lp;
}

void add_comm(TpBytes& into, Comm c, double bytes, int tp) {
  switch (c) {
    case Comm::kAllGather: into.all_gather += bytes; break;
    case Comm::kReduceScatter: into.reduce_scatter += bytes; break;
    case Comm::kAllReduce: into.all_reduce += bytes; break;
    case Comm::kAllToAll: into.all_to_all += bytes / tp; break;  // what each member sends
    case Comm::kNone: break;
  }
}

TpSplit split_of(const Rule& r) {
  if (r.name == "column") return TpSplit::kColumn;
  if (r.name == "row") return TpSplit::kRow;
  if (r.name == "replicated") return TpSplit::kReplicated;
  return TpSplit::kSharded;  // data, heads, features: each rank an equal slice of the work
}

// Megatron's rule for each problem operator, as an index into its rules.
std::vector<OpChoice> megatron_choices(const LayerProblem& lp) {
  std::vector<OpChoice> out;
  for (size_t i = 0; i < lp.ops.size(); ++i) {
    const std::vector<Rule>& rules = lp.problem.ops[i].rules;
    std::vector<std::string> wanted{"replicated"};
    if (lp.ops[i] != nullptr) {
      switch (megatron_split(*lp.ops[i], false)) {
        case TpSplit::kColumn: wanted = {"column"}; break;
        case TpSplit::kRow: wanted = {"row"}; break;
        case TpSplit::kSharded: wanted = {"heads", "features"}; break;
        case TpSplit::kReplicated:
        case TpSplit::kSequence: break;  // only under sequence parallelism, not asked here
      }
    }
    int rule = static_cast<int>(rules.size()) - 1;  // "replicated" is always last
    for (size_t k = 0; k < rules.size(); ++k) {
      if (std::find(wanted.begin(), wanted.end(), rules[k].name) != wanted.end()) {
        rule = static_cast<int>(k);
        break;
      }
    }
    out.push_back({rule, false});
  }
  return out;
}

}  // namespace

LayerSynthesis synthesise_layer(const ModelSpec& model, const Device& device, DType dtype, const CostModel& cost,
                                long samples, int tp, const GroupCollectives& comm) {
  ModelSpec plain = model;
  plain.training.recompute = Recompute::kNone;
  const OpGraph g = build_op_graph(plain, std::max(1L, samples), dtype, device.kernel_support());
  // Shares are counted in attention heads: the unit in which a TP group divides a layer.
  const LayerProblem lp = layer_problem(g, device, dtype, cost, tp, std::max(1L, model.heads), comm);
  const SpmdProblem& p = lp.problem;

  SpmdPlanOptions options;
  options.search.memory_limit = false;  // the pipeline's memory check judges whole stages
  options.search.sfb = false;           // no gradient synchronisation inside the group
  const SpmdPlan plan = plan_spmd(p, options);
  LayerSynthesis out;
  out.search = plan.search;
  if (!plan.found) return out;  // empty program: Megatron's
  out.ratios = plan.best.ratios;
  out.cost_s = plan.best.estimate_s;
  const std::vector<OpChoice> megatron = megatron_choices(lp);
  out.megatron_cost_s = program_cost(p, plan.best.ratios, options.search, megatron);
  out.megatron = true;
  for (size_t i = 0; i < megatron.size(); ++i) out.megatron = out.megatron && megatron[i].rule == plan.best.program.choices[i].rule;

  const std::vector<Layout> layouts = output_layouts(p, plan.best.program);
  const size_t n = p.ops.size();
  for (size_t i = 1; i + 1 < n; ++i) {
    const SpmdOp& op = p.ops[i];
    const Rule& rule = op.rules[plan.best.program.choices[i].rule];
    out.rules.push_back(op.name + ": " + rule.name);
    OpPlacement pl;
    pl.split = tp > 1 ? split_of(rule) : TpSplit::kReplicated;
    for (size_t k = 0; k < op.inputs.size(); ++k) {
      const Conversion cv = convert(layouts[op.inputs[k]], rule.inputs[k]);
      const double bytes = p.ops[op.inputs[k]].output_bytes;
      add_comm(pl.before_fwd, cv.forward, bytes, tp);
      add_comm(pl.before_bwd, cv.backward, bytes, tp);
      add_comm(pl.bwd, rule.backward_comm, bytes, tp);
    }
    out.program.ops.push_back(pl);
  }
  // The layer's output leaves replicated.
  const SpmdOp& last = p.ops[n - 1];
  const Conversion cv = convert(layouts[last.inputs[0]], replicated());
  add_comm(out.program.ops.back().after_fwd, cv.forward, last.output_bytes, tp);
  add_comm(out.program.ops.back().after_bwd, cv.backward, last.output_bytes, tp);
  return out;
}

}  // namespace hetsim
