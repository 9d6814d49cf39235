// File: studies/validation/run_evaluation.cpp
#include "studies/validation/run_evaluation.hpp"

#include "kernels_profile/calibration_profile.hpp"
#include "kernels_profile/kernel_table.hpp"
#include "studies/validation/calibration.hpp"

#include <algorithm>

#include "base/device_list.hpp"
#include "base/text.hpp"
#include "planner/block_costs.hpp"
#include "planner/hybrid/hybrid_plan_file.hpp"
#include "planner/hybrid/hybrid_planner.hpp"
#include "planner/hybrid/partial_recompute.hpp"
#include "planner/hybrid/pipeline_builder.hpp"
#include "planner/hybrid/stage_work.hpp"
#include "planner/hybrid/tp_collectives.hpp"
#include "planner/spmd/plan_file.hpp"
#include "planner/spmd/spmd_judge.hpp"
#include "planner/spmd/spmd_problem.hpp"
#include "planner/strategies.hpp"
#include "sim/collective.hpp"
#include "sim/trace.hpp"
#include "studies/validation/megatron_grid.hpp"
#include "workloads/op_graph.hpp"

namespace hetsim {

std::string RunScope::name() const {
  if (gpu_count <= 1) return "1 GPU";
  if (nodes <= 1) return "1 node";
  return "multi-node";
}

double narayanan_flops(const ModelSpec& m) {
  const double B = static_cast<double>(m.training.global_batch), s = static_cast<double>(m.seq_len);
  const double l = static_cast<double>(m.layers), h = static_cast<double>(m.hidden), V = static_cast<double>(m.vocab);
  return 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
}

namespace {

RunScope scope_of(const Cluster& c, const std::vector<int>& gpus) {
  RunScope s;
  std::set<int> nodes;
  for (int g : gpus) {
    s.gpus.insert(c.device_of(g).name);
    nodes.insert(c.gpus[g].node);
  }
  s.gpu_count = static_cast<int>(gpus.size());
  s.nodes = static_cast<int>(nodes.size());
  return s;
}

// The run's cluster, with its node count replaced when the run gives one.
Cluster run_cluster(const ValidationRun& run) {
  Cluster c = load_cluster(run.cluster);
  if (run.nodes > 0) {
    if (c.node_types.size() != 1) {
      throw InputError({Diagnostic{run.nodes_where.file, run.nodes_where.line, run.nodes_where.column, run.nodes_where.field,
                                   "nodes applies to a cluster of one node type; " + c.name + " has " +
                                       std::to_string(c.node_types.size())}});
    }
    const long gpus = static_cast<long>(run.nodes) * c.node_types.front().gpus_per_node;
    if (gpus > kMaxClusterGpus) {
      throw InputError({Diagnostic{run.nodes_where.file, run.nodes_where.line, run.nodes_where.column, run.nodes_where.field,
                                   std::to_string(run.nodes) + " nodes of " + std::to_string(c.node_types.front().gpus_per_node) +
                                       " GPUs make " + std::to_string(gpus) + " GPUs; hetsim simulates at most " +
                                       std::to_string(kMaxClusterGpus)}});
    }
    c.node_types.front().count = run.nodes;
    if (run.segment > 0) {  // the run's nodes `segment` to a domain: its domains are that large
      NodeType& nt = c.node_types.front();
      const int most = nt.nodes_per_domain();
      Diagnostic at = run.segment_where;
      if (most == 1) {
        at.message = "segment applies to node types whose NVLink domains span several nodes; " + nt.name + "'s are single nodes";
      } else if (run.segment > most) {
        at.message = "segment " + std::to_string(run.segment) + " places more nodes in an NVLink domain than " + nt.name + "'s hold (" +
                     std::to_string(most) + ")";
      }
      if (!at.message.empty()) throw InputError({at});
      nt.nvlink_domain = run.segment * nt.gpus_per_node;
    }
    index_gpus(c);
  }
  return c;
}

std::vector<int> all_gpus(const Cluster& c) {
  std::vector<int> v(c.gpu_count());
  for (int g = 0; g < c.gpu_count(); ++g) v[g] = g;
  return v;
}

void fill(RunResult& out, const std::vector<std::pair<std::string, double>>& predicted) {
  for (const MeasuredFigure& m : out.run->measured) {
    FigureResult f{m.key, m.value, 0};
    for (const auto& [k, v] : predicted) {
      if (k == m.key) f.predicted = v;
    }
    out.figures.push_back(f);
  }
}

void collective_run(const ValidationRun& run, RunResult& out, const SimOptions& sim) {
  const Cluster cluster = run_cluster(run);
  // The group is checked against the cluster only here: its errors point at the run's `group`.
  Diagnostic at = run.collective.group_where;
  std::vector<int> group;
  try {
    group = parse_device_list(run.collective.group, cluster.gpu_count(), at.field);
  } catch (const InputError& e) {
    at.message = e.diagnostics().front().message;
    throw InputError({at});
  }
  if (group.size() < 2) {
    at.message = "a collective needs at least 2 GPUs";
    throw InputError({at});
  }
  CollectiveTask task = collective(run.collective.op, group, run.collective.size_bytes);
  task.algorithm = run.collective.algorithm;
  task.root = group.front();
  if (task.algorithm != Algorithm::kAuto) {  // as hetsim collective --algorithm refuses it
    if (std::string why = unsupported_reason(task, task.algorithm, cluster); !why.empty()) {
      Diagnostic bad = run.collective.algorithm_where;
      bad.message = std::string(algorithm_name(task.algorithm)) + " cannot run " + std::string(collective_name(task.op)) + " here: " + why;
      throw InputError({bad});
    }
  }
  Program p;
  p.devices.resize(cluster.gpu_count());
  p.add({"collective", task, {}});
  const double t = simulate(p, cluster, sim).iteration_time_s;
  const double algbw = run.collective.size_bytes / t;
  const Fabric fabric(cluster);
  out.note = std::string(algorithm_name(choose_algorithm(task, cluster, fabric).algorithm));
  out.scope = scope_of(cluster, group);
  fill(out, {{"time_s", t}, {"algbw_Bps", algbw},
             {"busbw_Bps", algbw * busbw_factor(task.op, static_cast<int>(group.size()))}});
}

void matmul_run(const ValidationRun& run, RunResult& out, const CostModel& cost) {
  const MatmulRun& mm = run.matmul;
  const Device device = load_shipped_device(mm.device, mm.device_where);
  if (!device.supports(mm.dtype)) {
    Diagnostic at = mm.dtype_where;
    at.message = mm.device + " has no " + std::string(dtype_name(mm.dtype)) + " peak";
    throw InputError({at});
  }
  // torch.mm / torch.matmul of two plain matrices is cuBLAS's NN product, which is how the cost
  // model times a product of two activations; layout tn (x·Wᵀ) is a linear layer's forward, timed
  // from the rows of the layout frameworks run (gemm_fwd) where a GPU has them. Several shapes: the
  // sum of their times (each product its own kernel).
  // Block-scaled GEMMs (Transformer Engine's, cuBLASLt's) write their output in bf16.
  const double out_bytes = block_scaled(mm.dtype) ? dtype_bytes(DType::kBf16) : dtype_bytes(mm.dtype);
  double t = 0, flops = 0;
  for (const GemmShape& g : mm.shapes) {
    const double b = static_cast<double>(g.batch), m = static_cast<double>(g.m), n = static_cast<double>(g.n),
                 k = static_cast<double>(g.k);
    Op op = Op::make("matmul", mm.linear ? OpKind::kLinear : OpKind::kAttnContext, 0);
    op.shape = {g.batch, g.m, g.n};
    op.gemm = g;
    op.fwd_flops = 2 * b * m * n * k;
    op.fwd_bytes = b * ((m * k + k * n) * dtype_bytes(mm.dtype) + m * n * out_bytes);
    t += cost.op_time(device, op, mm.dtype, Pass::kForward).seconds;
    flops += op.fwd_flops;
  }
  // A measured rate above what the datasheet allows is a typo or a wrong unit, not a fast GPU (kernel
  // tables refuse such rows by the same ceiling); it would also pull a calibration fit.
  const double ceiling = measured_flop_ceiling(device, mm.dtype);
  for (const MeasuredFigure& f : run.measured) {
    const double rate = f.key == "tflops" ? f.value * 1e12 : f.key == "time_s" ? flops / f.value : 0;
    if (rate <= ceiling) continue;
    Diagnostic at = f.where;
    at.message = (f.key == "tflops" ? format_double("%g", f.value) + " TFLOP/s" : format_double("%g", f.value) + " s for " +
                                                                                   format_double("%.3g", flops) + " FLOP") +
                 " is more than " + device.name + " can do in " + std::string(dtype_name(mm.dtype)) + " (at most " +
                 format_double("%g", ceiling / 1e12) + " TFLOP/s: its peak, the fastest 16-bit one for 32-bit formats, and 10 % for clocks)";
    throw InputError({at});
  }
  out.scope.gpus = {device.name};
  fill(out, {{"time_s", t}, {"tflops", flops / t / 1e12}});
}

// One transformer layer (block 1) of a TP group on the first node: forward, then backward.
void layer_run(const ValidationRun& run, RunResult& out, const CostModel& cost, const SimOptions& sim) {
  const Cluster cluster = run_cluster(run);
  const ModelSpec model = load_model(run.layer.model);
  const int tp = run.layer.tp;
  const auto refuse = [&](const std::string& why) {
    Diagnostic at = run.layer.tp_where;
    at.message = "tp " + std::to_string(tp) + " " + why;
    throw InputError({at});
  };
  if (tp > cluster.node_types.front().gpus_per_node) {
    refuse("is wider than a node of " + cluster.name + " (" + std::to_string(cluster.node_types.front().gpus_per_node) + " GPUs)");
  }
  // As a training run's or a plan's tensor parallelism (check_hybrid_plan): whole heads per GPU.
  if (model.heads > 0 && model.heads % tp != 0) refuse("does not divide the model's " + std::to_string(model.heads) + " attention heads");
  if (model.kv_heads > 0 && model.kv_heads != model.heads && model.kv_heads % tp != 0) {
    refuse("does not divide the model's " + std::to_string(model.kv_heads) + " key/value heads");
  }
  // The modules recomputed must be the model's, as in a plan (check_hybrid_plan): moe_act of a dense model
  // recomputes nothing it has.
  HybridPlan modules;
  modules.recompute = run.layer.recompute;
  modules.recompute_modules = run.layer.recompute_modules;
  for (const PlanProblem& p : recompute_problems(modules, model)) {
    Diagnostic at = run.layer.recompute_where;
    at.field = p.field;
    at.message = p.message;
    throw InputError({at});
  }
  const std::vector<int> group = first_node_group(cluster, 0, tp);
  const Device& device = cluster.device_of(group.front());
  const DType dtype = resolve_dtype(model, cluster);
  StageWorkKey key{run.layer.micro_batch, tp, run.layer.sequence_parallel, run.layer.recompute, StageProgram::kMegatron};
  if (key.recompute == RecomputeMode::kSelective) key.recompute_modules = run.layer.recompute_modules;
  const std::vector<BlockWork> blocks = stage_block_work(model, device, dtype, cost, key);
  const BlockWork& layer = blocks.at(1);
  auto program = [&](bool backward) {
    Program p;
    p.devices.resize(cluster.gpu_count());
    const std::vector<int> mirrors(group.begin() + 1, group.end());
    int last = -1;
    auto compute = [&](double s, const std::string& label) {
      if (s <= 0) return;
      std::vector<int> deps;
      if (last >= 0) deps.push_back(last);
      last = p.add({label, ComputeTask{group.front(), s, 0, 0, mirrors}, std::move(deps)});
    };
    if (!backward) {
      for (const WorkPart& part : layer.parts) {
        compute(part.fwd_s, "fwd");
        last = add_tp_collectives(p, group, part.tp_fwd, key.sequence_parallel, last, "fwd");
      }
    } else {
      compute(layer.recompute_s, "recompute");
      last = add_tp_collectives(p, group, layer.recompute_tp, key.sequence_parallel, last, "recompute");
      for (auto it = layer.parts.rbegin(); it != layer.parts.rend(); ++it) {
        const double secs = it->bwd_input_s + it->bwd_weight_s;
        // tp_comm_overlap: the part's collectives run under its last bwd_overlap_s seconds.
        const double hidden = run.layer.tp_comm_overlap && it->tp_bwd.any() ? std::clamp(it->bwd_overlap_s, 0.0, secs) : 0;
        compute(secs - hidden, "bwd");
        const int sync = add_tp_collectives(p, group, it->tp_bwd, key.sequence_parallel, last, "bwd");
        if (hidden > 0) {
          compute(hidden, "bwd_weight");
          last = p.add({"bwd_join", ComputeTask{group.front(), 0, 0, 0, mirrors}, {last, sync}});
        } else {
          last = sync;
        }
      }
    }
    return p;
  };
  const double fwd = simulate(program(false), cluster, sim).iteration_time_s;
  const double bwd = simulate(program(true), cluster, sim).iteration_time_s;
  out.scope = scope_of(cluster, group);
  out.note = "tp " + std::to_string(tp) + (key.sequence_parallel ? ", sequence parallel" : "") +
             (run.layer.tp_comm_overlap ? ", tp comm overlap" : "") + ", recompute " + std::string(recompute_name(key.recompute));
  fill(out, {{"forward_s", fwd}, {"backward_s", bwd}, {"layer_time_s", fwd + bwd}, {"activation_bytes", layer.saved_bytes}});
}

// The peak memory the run's measurement stands for: of the GPU it names (the highest by default),
// with the runtime reserve left out where it counts PyTorch's allocations only.
double measured_peak(const ValidationRun& run, const Report& r) {
  const MeasuredMemory& m = run.training.memory;
  double peak = 0;
  if (m.gpu == MeasuredMemory::kHighest) {
    for (const DeviceReport& d : r.devices) peak = std::max(peak, d.peak_memory_bytes);
  } else {
    const size_t gpu = m.gpu == MeasuredMemory::kLast ? r.devices.size() - 1 : static_cast<size_t>(m.gpu);
    if (r.devices.empty() || gpu >= r.devices.size()) {
      Diagnostic at = run.memory_where;
      at.message = "GPU " + std::to_string(m.gpu) + " is not one of the run's " + std::to_string(r.devices.size()) + " GPUs";
      throw InputError({at});
    }
    peak = r.devices[gpu].peak_memory_bytes;
  }
  return m.allocated ? std::max(0.0, peak - kRuntimeReserveBytes) : peak;
}

// The run's plan (its Megatron layout, plan file or strategy) evaluated; `out.note` says which.
Evaluation evaluate_training(const ValidationRun& run, const ModelSpec& model, const Cluster& cluster, const CostModel& cost,
                             const SimOptions& sim, RunResult& out) {
  const TrainingRun& t = run.training;
  Evaluation ev;
  if (t.megatron) {
    const HybridPlan plan = megatron_plan(*t.megatron, model, cluster, run.megatron_where);
    HybridPlanner planner(model, cluster, cost, sim);
    ev = planner.evaluate(plan, "megatron grid");
    out.note = plan.shape();
  } else if (!t.plan.empty() && plan_file_kind(t.plan) == "hybrid") {
    const HybridPlan plan = load_hybrid_plan(t.plan, model, cluster);
    HybridPlanner planner(model, cluster, cost, sim);
    ev = planner.evaluate(plan, "plan " + t.plan.filename().string());
    out.note = plan.shape();
  } else if (!t.plan.empty()) {
    const SpmdProblem p = build_spmd_problem(model, cluster, cost);
    const PlanFile plan = load_plan(t.plan, p);
    ev = evaluate_candidate(p, plan.candidate, model, cluster, cost, plan.options, sim, "plan " + t.plan.filename().string());
    out.note = "spmd plan";
  } else {
    ev = evaluate_strategy(t.strategy, model, cluster, cost, sim);
    out.note = t.strategy;
  }
  return ev;
}

void training_run(const ValidationRun& run, RunResult& out, const CostModel& cost, const SimOptions& sim, bool trace) {
  const Cluster cluster = run_cluster(run);
  ModelSpec model = load_model(run.training.model);
  const TrainingRun& t = run.training;
  if (t.global_batch > 0) model.training.global_batch = t.global_batch;
  model.training.micro_batch = std::min(model.training.micro_batch, model.training.global_batch);
  resolve_experts(model, cluster.gpu_count());
  Evaluation ev;
  try {
    ev = evaluate_training(run, model, cluster, cost, sim, out);
  } catch (const InputError& e) {
    // A plan too large to simulate is refused for the model's global batch: here the run's (its
    // `global_batch`, or the model file's where the run gives none), at the run's entry.
    if (std::optional<InputError> moved = e.relocated("training.global_batch", run.global_batch_where,
                                                      t.global_batch > 0 ? "" : "the model file's training.global_batch: ")) {
      throw *moved;
    }
    throw;
  }
  out.scope = scope_of(cluster, all_gpus(cluster));
  out.scope.moe = model.moe.has_value();
  out.scope.mamba = model.mamba.has_value();
  out.scope.low_precision_gemms = model.training.low_precision_gemms();
  out.scope.fp32_gemms = model.training.fp32_gemms();
  out.scope.gemm_format = model.training.gemm_format();
  if (!ev.report.feasible) {
    out.failure = ev.report.infeasible_reason;
    fill(out, {});
    return;
  }
  if (trace) out.trace = chrome_trace(ev.program, cluster, ev.result);
  const Report& r = ev.report;
  const double peak = measured_peak(run, r);
  const double flops = t.flops == FlopsFormula::kNarayanan2021 ? narayanan_flops(model) : ev.program.model_flops;
  fill(out, {{"iteration_time_s", r.iteration_time_s},
             {"samples_per_s", r.samples_per_s},
             {"tokens_per_s", r.tokens_per_s},
             {"mfu", r.mfu},
             {"peak_memory_bytes", peak},
             {"tflops_per_gpu", flops / r.iteration_time_s / cluster.gpu_count() / 1e12}});
}

}  // namespace

RunResult evaluate_run(const ValidationRun& run, const CostModel& cost, const SimOptions& sim, bool trace) {
  RunResult out;
  out.run = &run;
  // The run's own software stack, where it names one, in place of the shipped defaults; a profile
  // the command line put in force (--calibration none or a file) stands for every run.
  std::optional<CalibrationScope> stack;
  if (!run.calibration.empty() && shipped_calibrations_in_force()) stack.emplace(run.calibration);
  switch (run.kind) {
    case RunKind::kCollective: collective_run(run, out, sim); break;
    case RunKind::kMatmul: matmul_run(run, out, cost); break;
    case RunKind::kLayer: layer_run(run, out, cost, sim); break;
    case RunKind::kTraining: training_run(run, out, cost, sim, trace); break;
  }
  // A run a calibration profile in force was fitted on: its time-like figure (the one fitted) takes
  // the leave-one-source-out error the profile records.
  if (!out.failure.empty()) return out;
  out.scope.profiles = profiles_in_force(out.scope.gpus);
  for (const std::string& gpu : out.scope.gpus) {
    const std::optional<CalibrationProfile> p = calibration_for(gpu);
    if (!p) continue;
    for (const CrossValidatedRun& c : p->runs) {
      if (c.run != run.name) continue;
      for (size_t f = 0; f < out.figures.size(); ++f) {
        if (quantity_of(out.figures[f].key) != Quantity::kTime) continue;
        out.held_out = RunResult::HeldOut{f, c.loso_error, p->name};
        return out;
      }
    }
  }
  return out;
}

}  // namespace hetsim
