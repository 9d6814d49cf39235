// File: planner/spmd/spmd_problem.cpp
#include "planner/spmd/spmd_problem.hpp"

#include <algorithm>

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

}  // namespace

SpmdProblem build_spmd_problem(const ModelSpec& model, const Cluster& cluster, const CostModel& cost) {
  const DType dtype = resolve_dtype(model, cluster);
  // One global micro-batch gives every device about the model's micro-batch; the iteration runs
  // it as many times as the global batch needs (gradient accumulation).
  const long global = model.training.global_batch;
  const long micro = std::min(global, static_cast<long>(cluster.gpu_count()) * model.training.micro_batch);
  const OpGraph g = build_op_graph(model, micro, dtype, cluster_kernel_support(cluster));
  SpmdProblem p;
  p.devices = cluster.gpu_count();
  p.accumulation = static_cast<double>(global) / static_cast<double>(micro);
  p.samples = global;
  for (const GpuSlot& s : cluster.gpus) p.type_of.push_back(s.node_type);
  for (const NodeType& nt : cluster.node_types) p.pass_host_s.push_back(nt.gpu.fitted.pass_host_s);
  const double e = dtype_bytes(dtype);
  const double state = state_bytes_per_param(model, dtype);
  for (const Op& op : g.ops) {
    SpmdOp s;
    s.name = op.name;
    s.kind = op.kind;
    s.inputs = op.inputs;
    for (const NodeType& nt : cluster.node_types) {
      const OpCost fwd = cost.op_time(nt.gpu, op, dtype, Pass::kForward);
      const OpCost bwd = cost.op_time(nt.gpu, op, dtype, Pass::kBackward);
      s.time_s.push_back(fwd.seconds + bwd.seconds);
      s.bwd_s.push_back(bwd.seconds);
      std::array<double, kCostSources> src{};
      for (int k = 0; k < kCostSources; ++k) src[k] = fwd.by_source[k] + bwd.by_source[k];
      s.sources.push_back(src);
    }
    double elems = 1;
    for (long d : op.shape) elems *= static_cast<double>(d);
    s.output_bytes = elems * e;
    s.param_elems = op.params;
    s.param_bytes = op.params * e;
    s.param_state_bytes = op.params * state;
    s.saved_bytes = op.saved_bytes;
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
