// File: planner/data_parallel.cpp
#include "planner/data_parallel.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "base/units.hpp"
#include "planner/block_costs.hpp"

namespace hetsim {

std::vector<long> split_proportionally(long total, const std::vector<double>& weights) {
  double sum = 0;
  for (double w : weights) sum += w;
  std::vector<long> out(weights.size(), 0);
  std::vector<double> exact(weights.size(), 0);
  long given = 0;
  for (size_t i = 0; i < weights.size(); ++i) {
    exact[i] = sum > 0 ? static_cast<double>(total) * weights[i] / sum : 0;
    out[i] = static_cast<long>(std::floor(exact[i]));
    given += out[i];
  }
  while (given < total) {
    size_t best = 0;
    double best_deficit = -1e300;
    for (size_t i = 0; i < weights.size(); ++i) {
      const double deficit = exact[i] - static_cast<double>(out[i]);
      if (deficit > best_deficit) {
        best_deficit = deficit;
        best = i;
      }
    }
    ++out[best];
    ++given;
  }
  return out;
}

namespace {

// Costs of one device type at one micro-batch size, computed once and shared by its GPUs.
struct TypeCosts {
  DType dtype = DType::kFp16;
  std::map<long, std::vector<BlockCost>> by_micro_batch;
};

const std::vector<BlockCost>& costs_for(TypeCosts& tc, const ModelSpec& m, const Device& dev, const CostModel& cost,
                                        long mb) {
  auto it = tc.by_micro_batch.find(mb);
  if (it == tc.by_micro_batch.end()) {
    it = tc.by_micro_batch.emplace(mb, block_costs(build_op_graph(m, mb, tc.dtype), dev, cost)).first;
  }
  return it->second;
}

}  // namespace

DataParallelPlan plan_data_parallel(const ModelSpec& model, const Cluster& cluster, const CostModel& cost,
                                    BatchSplit split, long global_batch) {
  DataParallelPlan plan;
  const int n = cluster.gpu_count();
  const long mb = model.training.micro_batch;
  const DType dtype = resolve_dtype(model, cluster);
  std::vector<TypeCosts> types(cluster.node_types.size());
  for (TypeCosts& tc : types) tc.dtype = dtype;

  // Speed of each GPU on this model: samples per second of forward + backward at the micro-batch.
  plan.speed_samples_per_s.resize(n);
  for (int g = 0; g < n; ++g) {
    const int t = cluster.gpus[g].node_type;
    double s = 0;
    for (const BlockCost& b : costs_for(types[t], model, cluster.device_of(g), cost, mb)) s += b.fwd_s + b.bwd_s;
    plan.speed_samples_per_s[g] = static_cast<double>(mb) / s;
  }
  plan.samples = split == BatchSplit::kEven ? split_proportionally(global_batch, std::vector<double>(n, 1.0))
                                            : split_proportionally(global_batch, plan.speed_samples_per_s);

  // Memory: model state for the whole model plus one micro-batch of activations.
  for (int g = 0; g < n; ++g) {
    const Device& dev = cluster.device_of(g);
    TypeCosts& tc = types[cluster.gpus[g].node_type];
    const std::vector<BlockCost>& blocks = costs_for(tc, model, dev, cost, mb);
    double params = 0, act = 0;
    for (const BlockCost& b : blocks) {
      params += b.params;
      act += b.saved_bytes;
    }
    if (plan.samples[g] == 0) act = 0;
    const double state = params * state_bytes_per_param(model, tc.dtype);
    const double need = state + act + kRuntimeReserveBytes;
    if (need > dev.memory_bytes) {
      plan.infeasible_reason = "gpu" + std::to_string(g) + " (" + dev.name + ") needs " + format_bytes(need) +
                               " (model state " + format_bytes(state) + ", activations of one micro-batch " +
                               format_bytes(act) + ", runtime reserve " + format_bytes(kRuntimeReserveBytes) +
                               ") but has " + format_bytes(dev.memory_bytes) + ": short by " +
                               format_bytes(need - dev.memory_bytes);
      return plan;
    }
  }

  Program& p = plan.program;
  p.strategy = split == BatchSplit::kEven ? "dp-even" : "dp-proportional";
  p.devices.resize(n);
  p.samples = static_cast<double>(global_batch);
  p.tokens = static_cast<double>(global_batch) * static_cast<double>(model.seq_len);
  const size_t nblocks = static_cast<size_t>(model.layers) + 2;
  std::vector<std::vector<int>> last_bwd(nblocks);  // per block: each GPU's final backward task
  for (int g = 0; g < n; ++g) {
    const Device& dev = cluster.device_of(g);
    TypeCosts& tc = types[cluster.gpus[g].node_type];
    const std::vector<BlockCost>& full = costs_for(tc, model, dev, cost, mb);
    double params = 0;
    for (const BlockCost& b : full) params += b.params;
    p.devices[g].static_memory_bytes = params * state_bytes_per_param(model, tc.dtype) + kRuntimeReserveBytes;
    p.devices[g].peak_flops = dev.peak(tc.dtype);
    const std::string prefix = "gpu" + std::to_string(g) + ".";
    for (long done = 0, k = 0; done < plan.samples[g]; ++k) {
      const long size = std::min(mb, plan.samples[g] - done);
      done += size;
      const bool last = done == plan.samples[g];
      const std::vector<BlockCost>& blocks = costs_for(tc, model, dev, cost, size);
      const std::string mbtag = "mb" + std::to_string(k) + ".";
      for (const BlockCost& b : blocks) {
        p.add({prefix + mbtag + b.name + ".fwd", ComputeTask{g, b.fwd_s, 0, b.saved_bytes}, {}});
      }
      for (size_t i = nblocks; i-- > 0;) {
        const BlockCost& b = blocks[i];
        const int t = p.add({prefix + mbtag + b.name + ".bwd", ComputeTask{g, b.bwd_s, b.model_flops, -b.saved_bytes}, {}});
        p.model_flops += b.model_flops;
        if (last) last_bwd[i].push_back(t);
      }
    }
  }
  // Gradient all-reduce per block, in the order backward produces them.
  std::vector<int> group(n);
  for (int g = 0; g < n; ++g) group[g] = g;
  int last_collective = -1;
  for (size_t i = nblocks; i-- > 0;) {
    const BlockCost& b = costs_for(types[0], model, cluster.node_types[0].gpu, cost, mb)[i];
    const double grad_bytes = b.params * dtype_bytes(dtype);
    if (n > 1 && grad_bytes > 0) {
      last_collective = p.add({"allreduce." + b.name, CollectiveTask{CollectiveOp::kAllReduce, group, grad_bytes}, last_bwd[i]});
    }
  }
  for (int g = 0; g < n; ++g) {
    const Device& dev = cluster.device_of(g);
    TypeCosts& tc = types[cluster.gpus[g].node_type];
    double params = 0;
    for (const BlockCost& b : costs_for(tc, model, dev, cost, mb)) params += b.params;
    const double opt_s = cost.optimizer_time(dev, params, state_bytes_per_param(model, tc.dtype)).seconds;
    std::vector<int> deps;
    if (last_collective >= 0) deps.push_back(last_collective);
    p.add({"gpu" + std::to_string(g) + ".optimizer", ComputeTask{g, opt_s, 0, 0}, deps});
  }
  plan.feasible = true;
  return plan;
}

}  // namespace hetsim
