// File: planner/data_parallel.cpp
#include "planner/data_parallel.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

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
  // The remaining units, one each, to the largest deficits (ties to the lower index): every
  // deficit is below one and the remaining units are their sum, so no share gets two.
  std::vector<size_t> order(weights.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  const auto left = static_cast<size_t>(std::max(0L, total - given));
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return exact[a] - static_cast<double>(out[a]) > exact[b] - static_cast<double>(out[b]);
  });
  for (size_t k = 0; k < left && !order.empty(); ++k) ++out[order[k % order.size()]];
  return out;
}

namespace {

// Block costs of each node type's GPU per micro-batch size, computed once and shared by its GPUs.
class CostCache {
 public:
  CostCache(const ModelSpec& m, const Cluster& c, const CostModel& cost, DType dtype)
      : model_(m), cluster_(c), cost_(cost), dtype_(dtype), by_type_(c.node_types.size()) {}

  const std::vector<BlockCost>& blocks(int gpu, long micro_batch) {
    const int t = cluster_.gpus[gpu].node_type;
    auto it = by_type_[t].find(micro_batch);
    if (it == by_type_[t].end()) {
      const OpGraph graph = build_op_graph(model_, micro_batch, dtype_, cluster_.node_types[t].gpu.kernel_support());
      it = by_type_[t].emplace(micro_batch, block_costs(graph, cluster_.node_types[t].gpu, cost_)).first;
    }
    return it->second;
  }

 private:
  const ModelSpec& model_;
  const Cluster& cluster_;
  const CostModel& cost_;
  DType dtype_;
  std::vector<std::map<long, std::vector<BlockCost>>> by_type_;
};

}  // namespace

DataParallelPlan plan_data_parallel(const ModelSpec& model, const Cluster& cluster, const CostModel& cost,
                                    BatchSplit split, long global_batch, bool every_step, bool every_replica) {
  DataParallelPlan plan;
  const int n = cluster.gpu_count();
  const long mb = model.training.micro_batch;
  const DType dtype = resolve_dtype(model, cluster);
  CostCache costs(model, cluster, cost, dtype);
  const size_t nblocks = static_cast<size_t>(model.layers) + 2;
  std::vector<double> block_params(nblocks);  // the same on every GPU: each holds the whole model
  double params = 0;
  for (size_t i = 0; i < nblocks; ++i) params += block_params[i] = costs.blocks(0, mb)[i].params;
  // Model state per GPU (its FP8 weight copies depend on the GPU: weight_copy_bytes).
  auto state_bytes_of = [&](int g) { return params * state_bytes_per_param(model, dtype, cluster.device_of(g).fp8_any_layout); };

  // A step of micro-batch b on GPU g: forward + backward, and the framework's host time before each
  // pass; the same for every GPU of a node type.
  std::map<std::pair<int, long>, double> step_cache;
  auto step_s = [&](int g, long b) {
    const auto key = std::make_pair(cluster.gpus[g].node_type, b);
    if (const auto it = step_cache.find(key); it != step_cache.end()) return it->second;
    double s = 2 * cluster.device_of(g).fitted.pass_host_s;
    for (const BlockCost& blk : costs.blocks(g, b)) s += blk.fwd_s + blk.bwd_s;
    return step_cache[key] = s;
  };
  // Speed of each GPU on this model: samples per second of forward + backward at the micro-batch.
  plan.speed_samples_per_s.resize(n);
  for (int g = 0; g < n; ++g) plan.speed_samples_per_s[g] = static_cast<double>(mb) / step_s(g, mb);
  const std::vector<long> even = split_proportionally(global_batch, std::vector<double>(n, 1.0));
  plan.samples = split == BatchSplit::kEven ? even : split_proportionally(global_batch, plan.speed_samples_per_s);
  if (split == BatchSplit::kProportional) {
    // Shares by speed leave partial micro-batches, which run fewer samples a second than full ones
    // (smaller GEMMs, the same fixed costs), so the exact shares need not finish first. Of them, the
    // same shares in whole micro-batches and the even split, take the one whose slowest GPU's
    // compute ends first (an estimate without communication; ties to the earlier).
    auto finish_s = [&](const std::vector<long>& share) {
      double worst = 0;
      for (int g = 0; g < n; ++g) {
        const long full = share[g] / mb, part = share[g] % mb;
        worst = std::max(worst, static_cast<double>(full) * step_s(g, mb) + (part > 0 ? step_s(g, part) : 0.0));
      }
      return worst;
    };
    double best = finish_s(plan.samples);
    auto consider = [&](std::vector<long> share) {
      if (const double f = finish_s(share); f < best) {
        best = f;
        plan.samples = std::move(share);
      }
    };
    if (global_batch % mb == 0) {
      std::vector<long> whole = split_proportionally(global_batch / mb, plan.speed_samples_per_s);
      for (long& x : whole) x *= mb;
      consider(std::move(whole));
    }
    consider(even);
  }

  // Memory: model state for the whole model plus one micro-batch of activations.
  for (int g = 0; g < n; ++g) {
    const Device& dev = cluster.device_of(g);
    double act = 0;
    if (plan.samples[g] > 0) {  // the largest micro-batch this GPU really runs
      for (const BlockCost& b : costs.blocks(g, std::min(mb, plan.samples[g]))) act += b.saved_bytes;
    }
    const double state_bytes = state_bytes_of(g);
    const double need = state_bytes + act + kRuntimeReserveBytes;
    if (need > dev.memory_bytes) {
      plan.infeasible_reason = memory_shortfall_text(g, dev, need,
                                                     "model state " + format_bytes(state_bytes) + ", activations of one micro-batch " +
                                                         format_bytes(act) + ", runtime reserve " + format_bytes(kRuntimeReserveBytes));
      return plan;
    }
  }

  // Replicas that nothing tells apart (the same GPU type, node health and share of the batch)
  // compute the same tasks from the same moment: one stream of tasks mirrored on all of them
  // (ComputeTask::mirrors), unless every_replica. The gradient all-reduces span every GPU either way.
  std::vector<std::vector<int>> classes;  // each: its first GPU, then the GPUs that mirror it
  {
    std::map<std::tuple<int, double, long>, size_t> index;
    for (int g = 0; g < n; ++g) {
      const int node = cluster.gpus[g].node;
      const double health = cluster.node_health.empty() ? 1.0 : cluster.node_health[node].compute_slowdown;
      const auto key = std::make_tuple(cluster.gpus[g].node_type, health, plan.samples[g]);
      const auto [it, added] = index.try_emplace(key, classes.size());
      if (every_replica || added) {
        classes.push_back({g});
      } else {
        classes[it->second].push_back(g);
      }
    }
  }

  // Micro-batch steps per GPU: a share that is not a multiple of the micro-batch runs its partial
  // micro-batch first, so that its last step, whose backward hides the gradient all-reduces, is a
  // full one (last, a step of one sample would leave them exposed). The full steps before the last
  // run as one task.
  auto partial_of = [&](int g) { return plan.samples[g] > mb ? plan.samples[g] % mb : 0L; };
  auto steps_of = [&](int g) { return plan.samples[g] / mb + (plan.samples[g] % mb != 0 ? 1 : 0); };  // no overflow
  auto collapsed_of = [&](int g) {
    const long full = plan.samples[g] / mb;
    return every_step || full < 3 ? 0L : full - 1;
  };
  double steps = 0;  // micro-batch steps simulated over all streams: the program's size, known before building it
  for (const std::vector<int>& c : classes) {
    const int g = c.front();
    steps += static_cast<double>(steps_of(g) - collapsed_of(g)) + (collapsed_of(g) > 0 ? 1 : 0);
  }
  bool hosts = false;  // a host task before each pass (pass_host)
  for (const NodeType& nt : cluster.node_types) hosts = hosts || nt.gpu.fitted.pass_host_s > 0;
  Program::check_program_size(steps * 2 * static_cast<double>(nblocks + (hosts ? 1 : 0)) + static_cast<double>(nblocks + classes.size()));
  Program& p = plan.program;
  p.strategy = split == BatchSplit::kEven ? "dp-even" : "dp-proportional";
  p.devices.resize(n);
  p.samples = static_cast<double>(global_batch);
  p.model_flops = p.samples * model_flops_per_sample(model, dtype);  // MFU's count (op_graph.hpp)
  p.tokens = static_cast<double>(global_batch) * static_cast<double>(model.seq_len);
  for (int g = 0; g < n; ++g) {
    p.devices[g].static_memory_bytes = state_bytes_of(g) + kRuntimeReserveBytes;
    p.devices[g].peak_flops = cluster.device_of(g).peak(dtype);
  }
  std::vector<std::vector<int>> last_bwd(nblocks);  // per block: each stream's final backward task
  for (const std::vector<int>& c : classes) {
    const int g = c.front();
    const std::vector<int> mirrors(c.begin() + 1, c.end());
    const double replicas = static_cast<double>(c.size());  // FLOPs and compute seconds count on each
    const std::string prefix = "gpu" + std::to_string(g) + ".";  // mirrored tasks carry their first GPU's name
    long done = 0, k = 0;
    // The framework's host time at the start of each forward and backward pass (the calibration
    // profile's pass_host): the GPU waits for it.
    const double host = cluster.device_of(g).fitted.pass_host_s;
    const auto step = [&](long size, bool last) {
      const std::vector<BlockCost>& blocks = costs.blocks(g, size);
      const std::string mbtag = "mb" + std::to_string(k) + ".";
      if (host > 0) p.add({prefix + mbtag + "host.fwd", ComputeTask{g, host, 0, 0, mirrors}, {}});
      for (const BlockCost& b : blocks) {
        p.add({prefix + mbtag + b.name + ".fwd", ComputeTask{g, b.fwd_s, 0, b.saved_bytes, mirrors}, {}});
        for (int s = 0; s < kCostSources; ++s) p.compute_source_s[s] += replicas * b.sources[s];
      }
      if (host > 0) p.add({prefix + mbtag + "host.bwd", ComputeTask{g, host, 0, 0, mirrors}, {}});
      for (size_t i = nblocks; i-- > 0;) {
        const BlockCost& b = blocks[i];
        const int t = p.add({prefix + mbtag + b.name + ".bwd", ComputeTask{g, b.bwd_s, b.model_flops, -b.saved_bytes, mirrors}, {}});
        if (last) last_bwd[i].push_back(t);
      }
      done += size;
      ++k;
    };
    const long partial = partial_of(g);
    if (const long repeats = collapsed_of(g); repeats > 0) {
      // The partial step and the full ones before the last (compute alone: no collective runs before
      // the last step's backward): one task of their summed length that holds one full step's
      // activations (the steps' peak), then releases them.
      double seconds = 0, flops = 0, activations = 0;
      for (const auto& [size, count] : {std::pair{partial, 1L}, std::pair{mb, repeats}}) {
        if (size == 0) continue;
        const double times = static_cast<double>(count);
        double step_s = 2 * host, step_flops = 0, step_bytes = 0;
        for (const BlockCost& b : costs.blocks(g, size)) {
          step_s += b.fwd_s + b.bwd_s;
          step_flops += b.model_flops;
          step_bytes += b.saved_bytes;
          for (int s = 0; s < kCostSources; ++s) p.compute_source_s[s] += replicas * times * b.sources[s];
        }
        seconds += times * step_s;
        flops += times * step_flops;
        activations = std::max(activations, step_bytes);
      }
      const long steps = repeats + (partial > 0 ? 1 : 0);
      std::string label = prefix;
      label.append("mb0-").append(std::to_string(steps - 1)).append(" (").append(std::to_string(steps));
      label.append(partial > 0 ? " steps as one task, the partial one first)" : " identical steps as one task)");
      p.add({label, ComputeTask{g, seconds, flops, activations, mirrors}, {}});
      p.add({label + ".release", ComputeTask{g, 0, 0, -activations, mirrors}, {}});
      done = partial + repeats * mb;
      k = steps;
    } else if (partial > 0) {
      step(partial, false);
    }
    while (done < plan.samples[g]) {
      const long size = std::min(mb, plan.samples[g] - done);
      step(size, done + size == plan.samples[g]);
    }
  }
  // Gradient all-reduce per block, in the order backward produces them; GPUs without samples
  // contribute zeros but still take part.
  std::vector<int> group(n);
  for (int g = 0; g < n; ++g) group[g] = g;
  int last_collective = -1;
  for (size_t i = nblocks; i-- > 0;) {
    const double grad_bytes = block_params[i] * grad_bytes_per_param(model, dtype);
    if (n > 1 && grad_bytes > 0) {
      const std::string& name = costs.blocks(0, mb)[i].name;
      last_collective = p.add({"allreduce." + name, collective(CollectiveOp::kAllReduce, group, grad_bytes), last_bwd[i]});
    }
  }
  for (const std::vector<int>& c : classes) {
    const int g = c.front();
    const Device& dev = cluster.device_of(g);
    // A per-layer profile's optimizer times when it covers every block, else the cost model.
    const std::vector<BlockCost>& blocks = costs.blocks(g, mb);
    const bool profiled = std::all_of(blocks.begin(), blocks.end(), [](const BlockCost& b) { return b.optimizer_s.has_value(); });
    const double replicas = static_cast<double>(c.size());
    double opt_s = 0;
    if (profiled) {
      for (const BlockCost& b : blocks) opt_s += *b.optimizer_s;
      p.compute_source_s[static_cast<int>(CostSource::kLayerProfile)] += replicas * opt_s;
    } else {
      const OpCost oc = cost.optimizer_time(dev, params, optimizer_traffic_per_param(model, dtype, dev.fp8_any_layout));
      opt_s = oc.seconds;
      for (int s = 0; s < kCostSources; ++s) p.compute_source_s[s] += replicas * oc.by_source[s];
    }
    std::vector<int> deps;
    if (last_collective >= 0) deps.push_back(last_collective);
    p.add({"gpu" + std::to_string(g) + ".optimizer", ComputeTask{g, opt_s, 0, 0, std::vector<int>(c.begin() + 1, c.end())}, deps});
  }
  plan.feasible = true;
  return plan;
}

}  // namespace hetsim
