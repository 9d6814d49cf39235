// File: planner/spmd/spmd_program.cpp
#include "planner/spmd/spmd_program.hpp"

#include <algorithm>
#include <cmath>

#include "planner/block_costs.hpp"

namespace hetsim {

namespace {

// Accumulates each device's compute until a collective needs it, then emits one task per device.
class ProgramBuilder {
 public:
  ProgramBuilder(Program& prog, int devices)
      : prog_(prog), n_(devices), pending_s_(devices, 0), pending_flops_(devices, 0), pending_mem_(devices, 0),
        last_(devices, -1), waits_(devices) {}

  void compute(int d, double seconds, double flops, double memory_delta) {
    pending_s_[d] += seconds;
    pending_flops_[d] += flops;
    pending_mem_[d] += memory_delta;
  }

  void flush(const std::string& label) {
    for (int d = 0; d < n_; ++d) {
      if (pending_s_[d] <= 0 && pending_mem_[d] == 0 && waits_[d].empty()) continue;
      std::vector<int> deps = waits_[d];
      last_[d] = prog_.add({"gpu" + std::to_string(d) + "." + label, ComputeTask{d, pending_s_[d], pending_flops_[d], pending_mem_[d]}, deps});
      pending_s_[d] = pending_flops_[d] = pending_mem_[d] = 0;
      waits_[d].clear();
    }
  }

  // A collective over all devices after their pending compute; `blocking`: the next compute waits.
  int collective(CollectiveTask t, const std::string& label, bool blocking) {
    flush(label + ".before");
    std::vector<int> deps;
    for (int d = 0; d < n_; ++d) {
      if (last_[d] >= 0) deps.push_back(last_[d]);
    }
    const int c = prog_.add({label, std::move(t), deps});
    if (blocking) {
      for (int d = 0; d < n_; ++d) waits_[d].push_back(c);
    }
    return c;
  }

 private:
  Program& prog_;
  int n_;
  std::vector<double> pending_s_, pending_flops_, pending_mem_;
  std::vector<int> last_;
  std::vector<std::vector<int>> waits_;
};

CollectiveTask collective_for(Comm c, const std::vector<int>& all, double bytes, const std::vector<double>& ratios,
                              bool grouped) {
  CollectiveTask t;
  t.group = all;
  t.size_bytes = bytes;
  switch (c) {
    case Comm::kAllGather: t.op = CollectiveOp::kAllGather; break;
    case Comm::kReduceScatter: t.op = CollectiveOp::kReduceScatter; break;
    case Comm::kAllReduce: t.op = CollectiveOp::kAllReduce; break;
    case Comm::kAllToAll:
      t.op = CollectiveOp::kAllToAll;
      t.size_bytes = bytes / static_cast<double>(all.size());  // what each member sends
      break;
    case Comm::kNone: break;
  }
  const auto [lo, hi] = std::minmax_element(ratios.begin(), ratios.end());
  if ((c == Comm::kAllGather || c == Comm::kReduceScatter) && *hi - *lo > 1e-9 * *hi) {
    for (double r : ratios) t.shard_bytes.push_back(r * bytes);  // uneven shards, as the shares
    if (!grouped) t.algorithm = Algorithm::kRing;                // padded to the largest shard
  }
  return t;
}

}  // namespace

std::vector<double> spmd_memory(const SpmdProblem& p, const SpmdCandidate& c) {
  std::vector<double> mem(p.devices, 0);
  for (size_t i = 0; i < p.ops.size(); ++i) {
    const Rule& rule = p.ops[i].rules[c.program.choices[i].rule];
    for (int d = 0; d < p.devices; ++d) {
      const double share = c.ratios[d];
      mem[d] += (stored_sharded(rule.params) ? share : 1.0) * p.ops[i].param_state_bytes[p.type_of[d]] +
                (rule.sharded ? share : 1.0) * p.ops[i].saved_bytes[p.type_of[d]];
    }
  }
  return mem;
}

Program spmd_to_program(const SpmdProblem& p, const SpmdCandidate& c, const ModelSpec& model, const Cluster& cluster,
                        const CostModel& cost, const SearchOptions& options, const std::string& strategy, bool every_step) {
  Program prog;
  prog.strategy = strategy;
  const int n = p.devices;
  prog.devices.resize(n);
  const DType dtype = resolve_dtype(model, cluster);
  const std::vector<double> state = spmd_memory(p, c);
  std::vector<double> activations(n, 0);
  for (size_t i = 0; i < p.ops.size(); ++i) {
    const Rule& rule = p.ops[i].rules[c.program.choices[i].rule];
    for (int d = 0; d < n; ++d) activations[d] += (rule.sharded ? c.ratios[d] : 1.0) * p.ops[i].saved_bytes[p.type_of[d]];
  }
  for (int d = 0; d < n; ++d) {
    prog.devices[d].static_memory_bytes = state[d] - activations[d] + kRuntimeReserveBytes;
    prog.devices[d].peak_flops = cluster.device_of(d).peak(dtype);
  }
  prog.samples = static_cast<double>(model.training.global_batch);
  prog.tokens = prog.samples * static_cast<double>(model.seq_len);
  prog.model_flops = model_flops_per_sample(model, dtype) * prog.samples;
  std::vector<int> all(n);
  for (int d = 0; d < n; ++d) all[d] = d;
  const std::vector<Layout> layouts = output_layouts(p, c.program);
  const long steps = std::max(1L, std::lround(p.accumulation));
  const bool grouped = options.grouped_collectives;
  ProgramBuilder b(prog, n);
  std::vector<int> syncs;
  // One micro-step; `repeats` > 1: that many identical steps before the last, when they only compute.
  auto emit_step = [&](long step, long repeats) {
    const std::string tag = repeats > 1 ? "mb" + std::to_string(step) + "-" + std::to_string(step + repeats - 1) + "."
                                        : "mb" + std::to_string(step) + ".";
    const double times = static_cast<double>(repeats);
    // The framework's host time at the start of each forward and backward pass (the calibration
    // profile's pass_host): the GPU waits for it before the pass's first kernel.
    const auto host = [&] {
      for (int d = 0; d < n; ++d) b.compute(d, cluster.device_of(d).fitted.pass_host_s * times, 0, 0);
    };
    host();
    for (size_t i = 0; i < p.ops.size(); ++i) {  // forward
      const SpmdOp& op = p.ops[i];
      const Rule& rule = op.rules[c.program.choices[i].rule];
      for (size_t k = 0; k < op.inputs.size(); ++k) {
        const Conversion cv = convert(layouts[op.inputs[k]], rule.inputs[k]);
        if (cv.forward != Comm::kNone) {
          b.collective(collective_for(cv.forward, all, p.ops[op.inputs[k]].output_bytes, c.ratios, grouped),
                       tag + op.name + "." + std::string(comm_name(cv.forward)), true);
        }
      }
      if (rule.params == ParamPlacement::kGathered) {  // ZeRO-3: the weights, gathered for this op
        b.collective(collective_for(Comm::kAllGather, all, op.param_bytes, c.ratios, grouped), tag + op.name + ".gather-params", true);
      }
      for (int d = 0; d < n; ++d) {
        const double share = rule.sharded ? c.ratios[d] : 1.0;
        const int t = p.type_of[d];
        b.compute(d, (op.time_s[t] - op.bwd_s[t]) * share * times, 0, op.saved_bytes[t] * share);
        for (int src = 0; src < kCostSources; ++src) prog.compute_source_s[src] += op.sources[t][src] * share * times;
      }
    }
    b.flush(tag + "forward");
    // Gradient all-reduces are bucketed per model block (layer), as DDP buckets them, and issued
    // when the block's backward is done or before any blocking collective.
    double bucket_bytes = 0;
    std::string bucket_block;
    auto issue_bucket = [&] {
      if (bucket_bytes > 0) {
        syncs.push_back(b.collective(collective_for(Comm::kAllReduce, all, bucket_bytes, c.ratios, grouped),
                                     bucket_block + ".gradient-sync", false));
      }
      bucket_bytes = 0;
    };
    host();
    for (size_t i = p.ops.size(); i-- > 0;) {  // backward
      const SpmdOp& op = p.ops[i];
      const Rule& rule = op.rules[c.program.choices[i].rule];
      const std::string block = op.name.substr(0, op.name.find('.'));
      if (block != bucket_block) {
        issue_bucket();
        bucket_block = block;
      }
      if (rule.params == ParamPlacement::kGathered) {  // gathered again for backward
        issue_bucket();
        b.collective(collective_for(Comm::kAllGather, all, op.param_bytes, c.ratios, grouped), tag + op.name + ".gather-params", true);
      }
      for (int d = 0; d < n; ++d) {
        const double share = rule.sharded ? c.ratios[d] : 1.0;
        b.compute(d, op.bwd_s[p.type_of[d]] * share * times, 0, -op.saved_bytes[p.type_of[d]] * share);
      }
      if (step + 1 == steps && rule.params == ParamPlacement::kGathered && n > 1) {  // gradients reduce-scattered
        syncs.push_back(b.collective(collective_for(Comm::kReduceScatter, all, op.param_bytes, c.ratios, grouped),
                                     op.name + ".reduce-scatter-grads", false));
      }
      for (size_t k = 0; k < op.inputs.size(); ++k) {
        const Conversion cv = convert(layouts[op.inputs[k]], rule.inputs[k]);
        const double bytes = p.ops[op.inputs[k]].output_bytes;
        for (Comm comm : {cv.backward, rule.backward_comm}) {
          if (comm != Comm::kNone) {
            issue_bucket();
            b.collective(collective_for(comm, all, bytes, c.ratios, grouped), tag + op.name + ".grad." + std::string(comm_name(comm)), true);
          }
        }
      }
      if (step + 1 == steps && rule.gradient_sync && n > 1 && op.param_bytes > 0) {
        if (c.program.choices[i].sfb) {  // sufficient factors instead of the weight gradient
          syncs.push_back(b.collective(collective_for(Comm::kAllGather, all, p.ops[op.inputs[0]].output_bytes, c.ratios, grouped),
                                       op.name + ".sfb.inputs", false));
          syncs.push_back(b.collective(collective_for(Comm::kAllGather, all, op.output_bytes, c.ratios, grouped), op.name + ".sfb.grads", false));
        } else {
          bucket_bytes += op.param_bytes;
        }
      }
    }
    issue_bucket();
    b.flush(tag + "backward");
  };
  // Steps before the last are identical. Whatever they compute, the first of their collectives
  // (over every device, and none of the step still running) starts each one afresh, so from the
  // second step on each is the one before shifted by a period: the program holds steps 0, 1 and
  // 2 and leaves the others to the simulator (Program::repeated_step). Steps without collectives
  // run on the compute stream alone: step 0, then the others before the last as one task of their
  // summed length (one step's activations), as data parallelism does.
  if (every_step || steps < 5) {
    // Written out, every step holds what the first does: refuse before writing them past the limit.
    const size_t before = prog.tasks.size();
    emit_step(0, 1);
    Program::check_program_size(static_cast<double>(before) + static_cast<double>(prog.tasks.size() - before) * static_cast<double>(steps));
    for (long step = 1; step < steps; ++step) emit_step(step, 1);
  } else {
    const size_t before = prog.tasks.size();
    emit_step(0, 1);
    const bool communicates = std::any_of(prog.tasks.begin() + static_cast<std::ptrdiff_t>(before), prog.tasks.end(),
                                          [](const Task& t) { return !std::holds_alternative<ComputeTask>(t.body); });
    if (communicates) {
      const int first = static_cast<int>(prog.tasks.size());
      emit_step(1, 1);
      const int size = static_cast<int>(prog.tasks.size()) - first;
      emit_step(2, 1);
      prog.repeated_step = RepeatedStep{first, size, steps - 4};
    } else {
      emit_step(1, steps - 2);
    }
    emit_step(steps - 1, 1);
  }
  for (int d = 0; d < n; ++d) {
    double params = 0;
    for (size_t i = 0; i < p.ops.size(); ++i) {
      const Rule& rule = p.ops[i].rules[c.program.choices[i].rule];
      params += p.ops[i].param_elems * (stored_sharded(rule.params) ? c.ratios[d] : 1.0);
    }
    const Device& gpu = cluster.device_of(d);
    const OpCost oc = cost.optimizer_time(gpu, params, optimizer_traffic_per_param(model, dtype, gpu.fp8_any_layout));
    prog.add({"gpu" + std::to_string(d) + ".optimizer", ComputeTask{d, oc.seconds, 0, 0}, syncs});
  }
  return prog;
}

}  // namespace hetsim
