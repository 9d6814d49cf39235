// File: studies/validation/run_file.cpp
#include "studies/validation/run_file.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "base/data_dir.hpp"
#include "base/text.hpp"
#include "base/yaml_reader.hpp"
#include "kernels_profile/calibration_profile.hpp"
#include "planner/hybrid/hybrid_plan_file.hpp"
#include "planner/strategies.hpp"
#include "sim/collective.hpp"

namespace hetsim {

std::string_view run_kind_name(RunKind k) {
  switch (k) {
    case RunKind::kCollective: return "collective";
    case RunKind::kMatmul: return "matmul";
    case RunKind::kLayer: return "layer";
    case RunKind::kTraining: return "training";
  }
  return "?";
}

const std::vector<std::string>& measurable(RunKind k) {
  static const std::vector<std::string> collective{"busbw_Bps", "algbw_Bps", "time_s"};
  static const std::vector<std::string> matmul{"tflops", "time_s"};
  static const std::vector<std::string> layer{"forward_s", "backward_s", "layer_time_s", "activation_bytes"};
  static const std::vector<std::string> training{"iteration_time_s", "samples_per_s", "tokens_per_s",
                                                 "tflops_per_gpu",   "mfu",           "peak_memory_bytes"};
  switch (k) {
    case RunKind::kCollective: return collective;
    case RunKind::kMatmul: return matmul;
    case RunKind::kLayer: return layer;
    case RunKind::kTraining: return training;
  }
  return training;
}

namespace {

// Physical range of each measured figure (its unit in its name): what a published measurement of
// one GPU, one collective or one training run can be. Outside it the error table would print
// figures no measurement gives (a 1e-300 s time: an error of 1e300 %).
struct MeasuredRange {
  double min = 0, max = 0;
};
MeasuredRange measured_range(const std::string& key) {
  if (key == "busbw_Bps" || key == "algbw_Bps") return {1e3, 1e15};            // 1 kB/s .. 1 PB/s
  if (key == "time_s") return {1e-9, 1e6};                                      // 1 ns .. 11.6 days
  if (key == "tflops" || key == "tflops_per_gpu") return {1e-6, 1e6};           // 1 MFLOP/s .. 1 EFLOP/s
  if (key == "forward_s" || key == "backward_s" || key == "layer_time_s") return {1e-9, 1e5};
  if (key == "activation_bytes" || key == "peak_memory_bytes") return {1.0, 1e15};  // 1 B .. 1 PB
  if (key == "iteration_time_s") return {1e-6, 1e7};                            // 1 us .. 116 days
  if (key == "samples_per_s") return {1e-6, 1e12};
  if (key == "tokens_per_s") return {1e-6, 1e15};
  if (key == "mfu") return {1e-6, 1.0};                                         // a fraction
  return {0, 1e300};
}

// `arg` relative to the run file's folder when that file exists, else the shipped input of that
// name; a diagnostic at the field when neither exists.
std::filesystem::path resolve(FieldReader& r, std::string_view key, const std::string& arg,
                              const std::filesystem::path& dir, std::string_view folder) {
  if (arg.empty()) {  // absent (another field names what runs), or given empty
    if (r.opt_node(key)) r.error(key, "is empty; expected a file next to the run file or a shipped name in " + std::string(folder) + "/");
    return {};
  }
  std::error_code ec;
  const std::filesystem::path local = dir / arg;
  if (std::filesystem::is_regular_file(local, ec)) return local;
  const std::filesystem::path shipped = data_root() / folder / (arg + ".yaml");
  if (std::filesystem::is_regular_file(shipped, ec)) return shipped;
  r.error(key, "\"" + arg + "\" is neither a file next to the run file nor a shipped name in " + std::string(folder) + "/");
  return {};
}

CollectiveRun read_collective(FieldReader c) {
  CollectiveRun out;
  const std::string op = c.choice("op", collective_names());
  out.op = collective_from_name(op).value_or(CollectiveOp::kAllReduce);
  out.size_bytes = c.quantity("size", Unit::kBytes);
  if (out.size_bytes > 0) {  // (0: not a size, said already)
    if (const std::string problem = collective_size_problem(out.size_bytes); !problem.empty()) {
      c.error("size", format_double("%.6g", out.size_bytes) + " bytes " + problem);
    }
  }
  out.group = c.opt_text("group").value_or("all");
  out.group_where = c.locate("group", "");
  out.algorithm_where = c.locate("algorithm", "");
  const std::string algorithm = c.opt_choice("algorithm", algorithm_names()).value_or("auto");
  out.algorithm = algorithm_from_name(algorithm).value_or(Algorithm::kAuto);
  c.finish();
  return out;
}

MatmulRun read_matmul(FieldReader c) {
  MatmulRun out;
  out.device = c.text("device");
  out.device_where = c.locate("device", "");
  auto shape = [](FieldReader& s) {
    GemmShape g;
    g.batch = s.opt_integer("batch", 1, 1L << 20).value_or(1);
    g.m = s.integer("m", 1, 1L << 24);
    g.n = s.integer("n", 1, 1L << 24);
    g.k = s.integer("k", 1, 1L << 24);
    return g;
  };
  if (c.opt_node("shapes")) {
    for (const char* key : {"m", "n", "k", "batch"}) {
      if (c.opt_node(key)) c.error(key, "give either m, n, k (one product) or shapes (several timed together), not both");
    }
    for (FieldReader s : c.list("shapes")) {
      if (!s.readable()) continue;
      out.shapes.push_back(shape(s));
      s.finish();
    }
  } else {
    out.shapes.push_back(shape(c));
  }
  const std::string dt = c.choice("dtype", dtype_names());
  out.dtype_where = c.locate("dtype", "");
  out.dtype = dtype_from_name(dt).value_or(DType::kBf16);
  out.linear = c.opt_choice("layout", {"nn", "tn"}).value_or("nn") == "tn";
  c.finish();
  return out;
}

MegatronGrid read_megatron(FieldReader c) {
  MegatronGrid g;
  g.tp = static_cast<int>(c.integer("tp", 1, 1024));
  g.pp = static_cast<int>(c.integer("pp", 1, 4096));
  g.micro_batch = c.integer("micro_batch", 1, 1L << 20);
  const std::string s =
      c.opt_choice("schedule", {"gpipe", "1f1b", "interleaved-1f1b", "eager-1f1b", "zero-bubble"}).value_or("1f1b");
  g.schedule = schedule_from_name(s);
  g.chunks = static_cast<int>(c.opt_integer("chunks", 1, 1024).value_or(1));
  if (g.chunks > 1 && g.schedule != PipelineSchedule::kInterleaved) c.error("chunks", "several chunks need schedule interleaved-1f1b");
  const RecomputeChoice recompute = read_recompute(c, RecomputeMode::kNone);
  g.recompute = recompute.mode;
  g.recompute_modules = recompute.modules;
  g.recompute_layers = recompute.layers;
  g.activation_offload_layers = read_activation_offload(c, recompute);
  g.sequence_parallel = c.opt_flag("sequence_parallel").value_or(false);
  const std::string tp_overlap = c.opt_choice("tp_comm_overlap", {"false", "true", "userbuffers"}).value_or("false");
  g.tp_comm_overlap = tp_overlap != "false";
  g.tp_comm_userbuffers = tp_overlap == "userbuffers";
  g.grad_sync_overlap = c.opt_flag("grad_sync_overlap").value_or(true);
  const std::string sync = c.opt_choice("gradient_sync", {"all-reduce", "zero-1", "zero-3"}).value_or("all-reduce");
  g.gradient_sync = sync == "zero-1" ? GradientSync::kZero1 : sync == "zero-3" ? GradientSync::kZero3 : GradientSync::kAllReduce;
  g.cp = static_cast<int>(c.opt_integer("cp", 1, 1024).value_or(1));
  g.cp_comm = c.opt_choice("cp_comm", {"ring", "all-to-all"}).value_or("ring") == "all-to-all" ? CpComm::kAllToAll : CpComm::kRing;
  g.overlap_param_gather = c.opt_flag("overlap_param_gather").value_or(false);
  g.overlap_moe_expert_parallel_comm = c.opt_flag("overlap_moe_expert_parallel_comm").value_or(false);
  g.embedding_in_split = c.opt_flag("embedding_in_split").value_or(false);
  g.loss_in_split = c.opt_flag("loss_in_split").value_or(false);
  g.ep = static_cast<int>(c.opt_integer("ep", 1, 1 << 20).value_or(1));
  g.expert_tp = static_cast<int>(c.opt_integer("expert_tp", 1, 1024).value_or(1));
  g.moe_dispatcher =
      moe_dispatcher_from_name(c.opt_choice("moe_dispatcher", moe_dispatcher_names()).value_or("alltoall"));
  c.finish();
  return g;
}

MeasuredMemory read_memory(FieldReader& m) {
  MeasuredMemory out;
  if (const std::optional<std::string> gpu = m.opt_text("gpu")) {
    if (*gpu == "last") {
      out.gpu = MeasuredMemory::kLast;
    } else if (!gpu->empty() && std::all_of(gpu->begin(), gpu->end(), [](char c) { return c >= '0' && c <= '9'; })) {
      out.gpu = static_cast<int>(m.opt_integer("gpu", 0, 1L << 20).value_or(0));
    } else if (*gpu != "max") {
      m.error("gpu", "\"" + *gpu + "\" is none of max (the highest peak over the GPUs), last (the last GPU) or a GPU's index");
    }
  }
  out.allocated = m.opt_choice("counts", {"device", "allocated"}).value_or("device") == "allocated";
  m.finish();
  return out;
}

ValidationRun read_run(FieldReader& r, const std::filesystem::path& dir) {
  ValidationRun run;
  run.where = r.locate("", "");
  run.nodes_where = r.locate("nodes", "");
  run.segment_where = r.locate("segment", "");
  run.megatron_where = r.locate("megatron", "");
  run.global_batch_where = r.locate("global_batch", "");
  run.memory_where = r.locate("memory", "");
  run.name = r.name("name");
  run.source = r.text("source");
  if (is_blank(run.source)) r.error("source", "is empty; say where the measurement was published or made");
  if (const std::optional<std::string> cls = r.opt_text("class")) {  // every table row prints it: a name's length
    if (is_blank(*cls)) r.error("class", "is empty; leave it out for the default class, or name one");
    else if (const std::string why = name_problem(*cls); !why.empty()) r.error("class", why);
    else run.class_name = *cls;
  }
  run.source_group = r.opt_text("source_group").value_or(run.source);
  // Leave-one-source-out leaves out a group by this name: an empty one would group runs by nothing said.
  if (is_blank(run.source_group)) r.error("source_group", "is empty; leave it out (the run's source is its group) or name the campaign");
  if (const std::optional<std::string> cal = r.opt_text("calibration")) {
    // A profile file next to the run file, as the run's other paths; else as --calibration takes it.
    std::error_code ec;
    const bool local = *cal != "none" && *cal != "shipped" && std::filesystem::is_regular_file(dir / *cal, ec);
    run.calibration = local ? (dir / *cal).string() : *cal;
    try {
      const CalibrationScope check(run.calibration);  // a profile that does not load is this field's error
    } catch (const InputError& e) {
      r.error("calibration", e.diagnostics().front().located_message());
    }
  }
  const std::optional<std::string> cluster = r.opt_text("cluster");
  std::optional<FieldReader> coll = r.opt_child("collective"), mm = r.opt_child("matmul"), lay = r.opt_child("layer");
  const bool has_collective = coll.has_value(), has_matmul = mm.has_value(), has_layer = lay.has_value();
  const int kinds = (has_collective ? 1 : 0) + (has_matmul ? 1 : 0) + (has_layer ? 1 : 0);
  const bool has_model = r.opt_text("model").has_value();
  if (kinds > 1 || (kinds == 1 && has_model)) {
    r.error_here("give exactly one of collective, matmul, layer, or model (a training run)");
  } else if (kinds == 0 && !has_model) {
    r.error_here("missing what to run: one of collective, matmul, layer, or model (a training run)");
  }
  if (has_collective) {
    run.kind = RunKind::kCollective;
    run.collective = read_collective(*coll);
  } else if (has_matmul) {
    run.kind = RunKind::kMatmul;
    run.matmul = read_matmul(*mm);
  } else if (has_layer) {
    run.kind = RunKind::kLayer;
    FieldReader& l = *lay;
    run.layer.model = resolve(l, "model", l.text("model"), dir, "workloads");
    run.layer.tp = static_cast<int>(l.opt_integer("tp", 1, 1024).value_or(1));
    run.layer.tp_where = l.locate("tp", "");
    run.layer.sequence_parallel = l.opt_flag("sequence_parallel").value_or(false);
    if (run.layer.sequence_parallel && run.layer.tp == 1) {
      l.error("sequence_parallel", "splits along the sequence what a tensor-parallel group would otherwise hold in full; "
                                   "at tp 1 there is no such group (Megatron-LM turns it off there)");
    }
    run.layer.tp_comm_overlap = l.opt_flag("tp_comm_overlap").value_or(false);
    const RecomputeChoice recompute = read_recompute(l, RecomputeMode::kNone);
    run.layer.recompute = recompute.mode;
    run.layer.recompute_modules = recompute.modules;
    run.layer.recompute_where = l.locate(l.opt_node("recompute_modules") ? "recompute_modules" : "recompute", "");
    run.layer.micro_batch = l.integer("micro_batch", 1, 1L << 20);
    l.finish();
  } else {
    run.kind = RunKind::kTraining;
    run.training.model = resolve(r, "model", r.opt_text("model").value_or(""), dir, "workloads");
    const std::optional<std::string> plan = r.opt_text("plan");
    // Present or not first: a strategy hetsim has not is its own error, not a missing one.
    const bool has_strategy = r.opt_node("strategy").has_value();
    const std::optional<std::string> strategy = has_strategy ? r.opt_choice("strategy", strategy_names()) : std::nullopt;
    std::optional<FieldReader> grid = r.opt_child("megatron");
    const int ways = (plan ? 1 : 0) + (has_strategy ? 1 : 0) + (grid ? 1 : 0);
    if (ways != 1 && has_model) r.error_here("a training run needs exactly one of plan, strategy or megatron");
    if (plan) {
      const std::filesystem::path p = dir / *plan;
      std::error_code ec;
      if (!std::filesystem::is_regular_file(p, ec)) r.error("plan", "\"" + *plan + "\" is not a file next to the run file");
      run.training.plan = p;
    }
    run.training.strategy = strategy.value_or("");
    if (grid) run.training.megatron = read_megatron(*grid);
    run.training.global_batch = r.opt_integer("global_batch", 1, 1L << 40).value_or(0);
    const std::string f = r.opt_choice("flops", {"model", "narayanan2021"}).value_or("model");
    run.training.flops = f == "narayanan2021" ? FlopsFormula::kNarayanan2021 : FlopsFormula::kModel;
    if (std::optional<FieldReader> mem = r.opt_child("memory")) {
      run.memory_where = mem->locate("gpu", "");  // a GPU the run has not is known with its report
      run.training.memory = read_memory(*mem);
    }
  }
  if (run.kind != RunKind::kMatmul) {
    if (!cluster) r.error_here("missing required field cluster");
    else run.cluster = resolve(r, "cluster", *cluster, dir, "topologies");
    run.nodes = static_cast<int>(r.opt_integer("nodes", 1, 1L << 20).value_or(0));
    run.segment = static_cast<int>(r.opt_integer("segment", 1, 1L << 20).value_or(0));
    if (run.segment > 0 && run.nodes == 0) r.error("segment", "needs nodes beside it (the node count it places in segments)");
    else if (run.segment > 0 && run.nodes % run.segment != 0) {
      r.error("segment", std::to_string(run.segment) + " does not divide the run's " + std::to_string(run.nodes) +
                             " nodes (Slurm places whole segments)");
    }
  } else if (cluster) {
    r.error("cluster", "a matmul run names its device, not a cluster");
  }
  FieldReader m = r.child("measured");
  const std::vector<std::string>& keys = measurable(run.kind);
  bool any = false;
  for (const std::string& k : keys) {
    any = m.opt_text(k).has_value() || any;
    const MeasuredRange range = measured_range(k);
    if (const std::optional<double> v = m.opt_number(k, -std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity())) {
      if (!(*v > 0)) m.error(k, "must be a positive number");
      else if (*v < range.min || *v > range.max) m.error(k, format_double("%g", *v) + " is outside the physical range of " + k + " (" + format_double("%g", range.min) + " to " + format_double("%g", range.max) + ")");
      else run.measured.push_back({k, *v, m.locate(k, "")});
    }
  }
  m.finish();
  if (!any) {
    std::string list;
    for (const std::string& k : keys) {
      if (!list.empty()) list.append(", ");
      list.append(k);
    }
    m.error_here("no measured figure; a " + std::string(run_kind_name(run.kind)) + " run compares " + list);
  }
  r.finish();
  return run;
}

}  // namespace

std::vector<ValidationRun> load_runs(const std::filesystem::path& file) {
  const YamlFile f = YamlFile::load_list(file);
  Diagnostics diags;
  std::vector<ValidationRun> runs;
  std::set<std::string> names;
  for (FieldReader& r : f.items(diags)) {
    ValidationRun run = read_run(r, file.parent_path());
    if (!run.name.empty() && !names.insert(run.name).second) r.error("name", "\"" + run.name + "\" names an earlier run too");
    runs.push_back(std::move(run));
  }
  diags.throw_if_any();
  return runs;
}

std::vector<ValidationRun> load_run_files(const std::vector<std::string>& files) {
  std::vector<ValidationRun> runs;
  std::map<std::string, Diagnostic> seen;  // name: where it was first given
  std::vector<Diagnostic> twice;
  std::map<std::filesystem::path, std::string> given;  // a file's canonical path: as it was first given
  for (const std::string& f : files) {
    std::error_code ec;
    const std::filesystem::path canonical = std::filesystem::weakly_canonical(f, ec);
    if (!ec) {
      if (const auto [at, first] = given.emplace(canonical, f); !first) {
        throw InputError(f, "--runs", "is given twice" + (at->second == f ? std::string() : " (also as " + in_quotes(at->second) + ")") +
                                          ": give each run file once");
      }
    }
    for (ValidationRun& r : load_runs(f)) {
      if (const auto [at, first] = seen.emplace(r.name, r.where); !first) {
        Diagnostic d = r.where;
        d.field = "name";
        d.message = in_quotes(r.name) + " names a run of " + at->second.file + ":" + std::to_string(at->second.line) + " too";
        twice.push_back(std::move(d));
      }
      runs.push_back(std::move(r));
    }
  }
  if (!twice.empty()) throw InputError(twice);
  return runs;
}

}  // namespace hetsim
