// File: cli/output/summary.cpp
#include "cli/output/summary.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <ostream>
#include <string>

#include "base/text.hpp"
#include "base/units.hpp"
#include "studies/validation/error_bars.hpp"

namespace hetsim::cli {
namespace {

// `s` filled to `width`, and never run into the next column (a figure wider than its column).
std::string pad(std::string s, size_t width) {
  s.append(s.size() < width ? width - s.size() : 1, ' ');
  return s;
}

std::string rstrip(std::string s) {
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

// Device types in cluster order, each once.
std::vector<std::string> gpu_types(const Cluster& c) {
  std::vector<std::string> out;
  for (const NodeType& nt : c.node_types) {
    if (std::find(out.begin(), out.end(), nt.gpu.name) == out.end()) out.push_back(nt.gpu.name);
  }
  return out;
}

// Mean share of the iteration each GPU type spends computing.
std::map<std::string, double> busy_share(const Report& r) {
  std::map<std::string, std::pair<double, int>> acc;
  for (const DeviceReport& d : r.devices) {
    acc[d.gpu].first += r.iteration_time_s > 0 ? d.compute_s / r.iteration_time_s : 0;
    acc[d.gpu].second += 1;
  }
  std::map<std::string, double> out;
  for (const auto& [gpu, v] : acc) out[gpu] = v.first / v.second;
  return out;
}

std::string factors(const Degradation& d) {
  std::string s;
  auto add = [&](const char* what, double f) {
    if (f != 1) s += (s.empty() ? "" : ", ") + std::string(what) + " x" + format_double("%g", f);
  };
  add("compute time", d.compute_slowdown);
  add("NIC bandwidth", d.nic_bandwidth);
  add("intra-node bandwidth", d.intra_node_bandwidth);
  return s;
}

}  // namespace

void print_header(std::ostream& out, const ModelSpec& model, const Cluster& cluster, long global_batch, long micro_batch) {
  std::map<std::string, int> counts;
  for (int g = 0; g < cluster.gpu_count(); ++g) counts[cluster.device_of(g).name]++;
  std::string mix;
  for (const std::string& t : gpu_types(cluster)) mix += (mix.empty() ? "" : " + ") + std::to_string(counts[t]) + " x " + t;
  out << model.name << " on " << cluster.name << ": " << cluster.gpu_count() << " GPUs (" << mix << "), global batch "
      << global_batch << ", micro-batch " << micro_batch << ", seq " << model.seq_len
      << (model.training.kernels == TrainingKernels::kEager ? ", eager PyTorch kernels (training.kernels)" : "") << "\n";
  for (const NodeType& nt : cluster.node_types) {  // what-if degradation, said up front
    if (!nt.degraded.healthy()) out << "degraded: every " << nt.name << " node: " << factors(nt.degraded) << "\n";
    for (const auto& [index, d] : nt.degraded_nodes) {
      if (!d.healthy()) out << "degraded: " << nt.name << " node " << index << ": " << factors(d) << " (simulated; the planner plans for the type)\n";
    }
  }
  out << "\n";
}

void print_strategy_table(std::ostream& out, const std::vector<Report>& reports, const Cluster& cluster) {
  const std::vector<std::string> types = gpu_types(cluster);
  std::string head = pad("strategy", 17) + pad("estimate", 11) + pad("iteration", 12) + pad("samples/s", 11) +
                     pad("tokens/s", 11) + pad("MFU", 8) + pad("efficiency", 12);
  for (const std::string& t : types) head += pad("busy " + t, t.size() + 7);
  head = rstrip(head);
  out << head << "\n" << std::string(head.size(), '-') << "\n";
  for (const Report& r : reports) {
    std::string line = pad(r.strategy, 17);
    if (!r.feasible) {
      out << line << "infeasible: " << r.infeasible_reason << "\n";
      continue;
    }
    line += pad(r.estimated_s > 0 ? format_time(r.estimated_s) : "-", 11) + pad(format_time(r.iteration_time_s), 12) + pad(format_double("%.2f", r.samples_per_s), 11) +
            pad(format_double("%.0f", r.tokens_per_s), 11) + pad(format_double("%.1f%%", 100 * r.mfu), 8) +
            pad(r.upper_bound_samples_per_s > 0 ? format_double("%.1f%%", 100 * r.efficiency) : "-", 12);
    const std::map<std::string, double> busy = busy_share(r);
    for (const std::string& t : types) line += pad(format_double("%.1f%%", 100 * busy.at(t)), t.size() + 7);
    out << rstrip(line) << "\n";
  }
  bool shapes = false;
  for (const Report& r : reports) {
    if (r.shape.empty()) continue;
    if (!shapes) out << "\nhybrid shapes:\n";
    shapes = true;
    // Two rows of one shape differ in what the shape leaves out: the layer split, said for both
    // (resharding and placement aside, which --emit-plan writes).
    const bool twin = std::count_if(reports.begin(), reports.end(), [&](const Report& o) { return o.shape == r.shape; }) > 1;
    out << "  " << pad(r.strategy, 17) << r.shape << (twin && !r.layer_split.empty() ? "; layers " + r.layer_split : "") << "\n";
  }
  if (!reports.empty() && reports.front().upper_bound_samples_per_s > 0) {
    out << "\nupper bound: " << format_double("%.2f", reports.front().upper_bound_samples_per_s)
        << " samples/s (each GPU type at its best per-GPU throughput on a homogeneous cluster of its own nodes)\n";
  }
}

void print_run_summary(std::ostream& out, const Report& r, const Cluster& cluster) {
  out << "strategy: " << r.strategy << "\n";
  if (!r.feasible) {
    out << "infeasible: " << r.infeasible_reason << "\n";
    return;
  }
  out << "iteration time: " << format_time(r.iteration_time_s);
  if (r.extrapolated_copies > 0) {
    out << " ± " << format_time(r.extrapolation_bound_s) << " (an estimate: " << r.extrapolated_copies
        << " copies of the pipeline's steady state, never exactly periodic, added at the simulated one's period, not simulated; "
           "--every-step simulates them)";
  }
  out << "\n"
      << "throughput: " << format_double("%.2f", r.samples_per_s) << " samples/s, " << format_double("%.0f", r.tokens_per_s) << " tokens/s\n"
      << "MFU: " << format_double("%.1f%%", 100 * r.mfu);
  if (r.upper_bound_samples_per_s > 0) {
    out << ", efficiency " << format_double("%.1f%%", 100 * r.efficiency) << " of the upper bound ("
        << format_double("%.2f", r.upper_bound_samples_per_s) << " samples/s)";
    if (r.efficiency > 1) {
      out << "\n(above 100 %: faster than the references, each the planner's best plan by estimate on one GPU type alone, "
             "simulated: the bound understates what these GPUs reach)";
    }
  }
  out << "\n\n" << pad("GPU type", 18) << pad("count", 7) << pad("compute", 12) << pad("comm", 12) << pad("idle", 12)
      << "peak memory / capacity\n";
  for (const std::string& t : gpu_types(cluster)) {
    double compute = 0, comm = 0, idle = 0, mem = 0, cap = 0;
    int count = 0;
    for (const DeviceReport& d : r.devices) {
      if (d.gpu != t) continue;
      compute += d.compute_s;
      comm += d.comm_s;
      idle += d.idle_s;
      mem = std::max(mem, d.peak_memory_bytes);
      cap = d.memory_capacity_bytes;
      ++count;
    }
    out << pad(t, 18) << pad(std::to_string(count), 7) << pad(format_time(compute / count), 12)
        << pad(format_time(comm / count), 12) << pad(format_time(idle / count), 12) << format_bytes(mem) << " / "
        << format_bytes(cap) << "\n";
  }
  out << "(per-GPU means; compute and comm overlap, idle = neither stream busy)\n";
  std::string sources;
  for (const auto& [name, share] : r.compute_time_sources) {
    if (share > 0) sources += (sources.empty() ? "" : ", ") + format_double("%.1f%% ", 100 * share) + name;
  }
  if (!sources.empty()) out << "compute times from: " << sources << "\n";
  print_error_bars(out, r, cluster);
}

void print_assumptions(std::ostream& out, const std::vector<std::string>& assumptions) {
  out << "\nassumptions:\n";
  for (const std::string& a : assumptions) out << "  - " << a << "\n";
}

}  // namespace hetsim::cli

namespace hetsim::cli {

void print_spmd_plan(std::ostream& out, const SpmdProblem& p, const SpmdCandidate& c, const Cluster& cluster) {
  out << "shares of each micro-step's batch and split tensors (per GPU):";
  struct Shares {
    double sum = 0, least = 1, most = 0;
    int count = 0;
  };
  std::map<std::string, Shares> by_type;
  for (int d = 0; d < p.devices; ++d) {
    Shares& e = by_type[cluster.device_of(d).name];
    e.sum += c.ratios[d];
    e.least = std::min(e.least, c.ratios[d]);
    e.most = std::max(e.most, c.ratios[d]);
    e.count += 1;
  }
  for (const std::string& t : gpu_types(cluster)) {
    const Shares& e = by_type[t];
    const double mean = e.sum / e.count;
    out << "  " << t << " ";
    if (e.most - e.least > 1e-6 * std::max(mean, 1e-12)) {  // unequal within the type (a plan file may say so)
      out << format_double("%.2f", 100 * e.least) << "-" << format_double("%.2f%%", 100 * e.most) << " (mean "
          << format_double("%.2f%%", 100 * mean) << ")";
    } else {
      out << format_double("%.2f%%", 100 * mean);
    }
    out << " x " << e.count;
  }
  out << "\n";
  // Shardings, consecutive layers with the same choices merged.
  struct Group {
    std::string label, choices;
  };
  std::vector<Group> groups;
  auto block_of = [](const std::string& name) {
    const size_t dot = name.find('.');
    return dot == std::string::npos ? name : name.substr(0, dot);
  };
  std::string cur_block, cur_choices;
  auto flush = [&] {
    if (cur_block.empty()) return;
    if (!groups.empty() && groups.back().choices == cur_choices && cur_block.starts_with("layer") &&
        groups.back().label.starts_with("layer")) {
      // "layer3" or "layers 3-7" followed by "layer8" becomes "layers 3-8".
      const std::string& prev = groups.back().label;
      const std::string first = prev.starts_with("layers ") ? prev.substr(7, prev.find('-') - 7) : prev.substr(5);
      groups.back().label = "layers " + first + "-" + cur_block.substr(5);
      return;
    }
    groups.push_back({cur_block, cur_choices});
  };
  for (size_t i = 0; i < p.ops.size(); ++i) {
    const std::string block = block_of(p.ops[i].name);
    if (block != cur_block) {
      flush();
      cur_block = block;
      cur_choices.clear();
    }
    const size_t dot = p.ops[i].name.find('.');
    const std::string op = dot == std::string::npos ? "" : p.ops[i].name.substr(dot + 1) + " ";
    cur_choices += (cur_choices.empty() ? "" : ", ") + op + p.ops[i].rules[c.program.choices[i].rule].name +
                   (c.program.choices[i].sfb ? "+sfb" : "");
  }
  flush();
  out << "shardings:\n";
  for (const Group& g : groups) out << "  " << g.label << ": " << g.choices << "\n";
  // Collectives of one iteration.
  std::map<std::string, std::pair<double, double>> comms;  // count, bytes (counts reach 1e12 and more)
  std::set<std::string> synced_blocks;
  const std::vector<Layout> layouts = output_layouts(p, c.program);
  const double steps = p.accumulation;
  for (size_t i = 0; i < p.ops.size(); ++i) {
    const Rule& rule = p.ops[i].rules[c.program.choices[i].rule];
    for (size_t k = 0; k < p.ops[i].inputs.size(); ++k) {
      const Conversion cv = convert(layouts[p.ops[i].inputs[k]], rule.inputs[k]);
      const double bytes = p.ops[p.ops[i].inputs[k]].output_bytes;
      for (Comm cm : {cv.forward, cv.backward, rule.backward_comm}) {
        if (cm == Comm::kNone) continue;
        auto& e = comms[std::string(comm_name(cm))];
        e.first += steps;
        e.second += steps * bytes;
      }
    }
    if (rule.params == ParamPlacement::kGathered && p.ops[i].param_bytes > 0) {
      auto& g = comms["zero all-gather"];
      g.first += 2 * steps;
      g.second += 2 * steps * p.ops[i].param_bytes;
      auto& rs = comms["zero reduce-scatter"];
      rs.first += 1;
      rs.second += p.ops[i].param_bytes;
    }
    if (rule.gradient_sync && p.ops[i].param_bytes > 0) {
      // All-reduces are bucketed per block (layer), as the program issues them.
      const std::string block = block_of(p.ops[i].name);
      const bool new_bucket = !c.program.choices[i].sfb && synced_blocks.insert(block).second;
      auto& e = comms[c.program.choices[i].sfb ? "sfb all-gather" : "gradient all-reduce"];
      e.first += c.program.choices[i].sfb ? 2 : (new_bucket ? 1 : 0);
      e.second += c.program.choices[i].sfb ? p.ops[p.ops[i].inputs[0]].output_bytes + p.ops[i].output_bytes : p.ops[i].param_bytes;
    }
  }
  out << "collectives per iteration:";
  if (p.devices <= 1) comms.clear();  // one GPU: the rules' collectives have nobody to talk to
  if (comms.empty()) out << " none";
  for (const auto& [name, e] : comms) out << "  " << name << " " << format_double("%.15g", e.first) << " (" << format_bytes(e.second) << ")";
  out << "\n";
}

void print_search_stats(std::ostream& out, const SpmdPlan& plan, double plan_time_s, const std::string& heuristic) {
  out << "search: " << plan.search.expanded << " states expanded (" << heuristic << " heuristic), " << plan.rounds
      << " rounds of A* + LP, search " << format_time(plan.search.seconds) << ", LP " << format_time(plan.lp_seconds)
      << "; planning with simulation of the candidates took " << format_time(plan_time_s) << "\n";
}

void print_hybrid_plan(std::ostream& out, const HybridPlan& plan, const Cluster& cluster) {
  out << "hybrid plan: " << plan.shape() << "; micro-batch " << plan.micro_batch << ", recompute "
      << recompute_name(plan.recompute) << ", gradient sync " << gradient_sync_name(plan.gradient_sync) << "\n";
  // Pipelines that differ only in their GPUs are printed once, with their count.
  for (size_t p = 0; p < plan.pipelines.size(); ++p) {
    const PipelinePlan& pl = plan.pipelines[p];
    size_t same = 1;
    while (p + same < plan.pipelines.size() && plan.pipelines[p + same].micro_batches == pl.micro_batches &&
           plan.pipelines[p + same].stages.size() == pl.stages.size()) {
      bool alike = true;
      for (size_t s = 0; s < pl.stages.size() && alike; ++s) {
        const StagePlan& a = pl.stages[s];
        const StagePlan& b = plan.pipelines[p + same].stages[s];
        alike = a.tp == b.tp && a.chunks == b.chunks && a.devices.size() == b.devices.size() &&
                cluster.device_of(a.devices[0]).name == cluster.device_of(b.devices[0]).name;
      }
      if (!alike) break;
      ++same;
    }
    out << "  pipeline" << (same > 1 ? "s " + std::to_string(p) + "-" + std::to_string(p + same - 1) : " " + std::to_string(p))
        << ": " << pl.micro_batches << " micro-batches\n";
    for (size_t s = 0; s < pl.stages.size(); ++s) {
      const StagePlan& st = pl.stages[s];
      std::map<std::string, int> types;
      for (int d : st.devices) ++types[cluster.device_of(d).name];
      std::string type_list;
      for (const auto& [name, n] : types) type_list += (type_list.empty() ? "" : " + ") + std::to_string(n) + " x " + name;
      std::string layers;
      for (const LayerRange& r : st.chunks) {
        layers += (layers.empty() ? "" : ", ") + (r.first == r.last ? std::to_string(r.first) : std::to_string(r.first) + "-" + std::to_string(r.last));
      }
      std::vector<int> sorted = st.devices;
      std::sort(sorted.begin(), sorted.end());
      out << "    stage " << s << ": gpus " << format_devices(sorted) << " (" << type_list << "), tp " << st.tp;
      if (st.dp() > 1) out << ", dp " << st.dp();
      out << ", layers " << layers << " (" << st.layer_count() << ")\n";
    }
    p += same - 1;
  }
  std::vector<char> used(cluster.gpu_count(), 0);
  for (const PipelinePlan& pl : plan.pipelines) {
    for (const StagePlan& st : pl.stages) {
      for (int d : st.devices) used[d] = 1;
    }
  }
  std::vector<int> idle;
  for (int g = 0; g < cluster.gpu_count(); ++g) {
    if (!used[g]) idle.push_back(g);
  }
  if (!idle.empty()) out << "  idle (in no stage): gpus " << format_devices(idle) << "\n";
}

void print_plan_choice(std::ostream& out, const PlanResult& r, const Cluster& cluster) {
  const Report best = r.chosen_report();
  out << "\nchosen: " << best.strategy << " (smallest simulated time of " << r.candidates()
      << (r.candidates() == 1 ? " candidate)\n" : " candidates)\n");
  // A comparison row (a baseline, a faithful mode) faster than every candidate is never chosen: say
  // so, or the table reads as if the planner had picked the slower of two.
  const Report* faster = nullptr;
  for (size_t i = r.candidates(); i < r.rows.size(); ++i) {
    const Report& row = r.rows[i];
    if (row.feasible && row.iteration_time_s > 0 && row.iteration_time_s < best.iteration_time_s * (1 - 1e-9) &&
        (faster == nullptr || row.iteration_time_s < faster->iteration_time_s)) {
      faster = &row;
    }
  }
  if (faster != nullptr) {
    out << "note: " << faster->strategy << " ran faster (" << format_time(faster->iteration_time_s) << " against "
        << format_time(best.iteration_time_s) << "), but the rows below the candidates are comparisons, never chosen: "
        << "hetsim's own candidates, with the planner switches given, missed that program\n";
  }
  out << "\n";
  if (r.chosen_spmd() != nullptr) {
    print_spmd_plan(out, r.spmd.problem, *r.chosen_spmd(), cluster);
  } else {
    print_hybrid_plan(out, *r.chosen_hybrid(), cluster);
  }
  if (r.spmd_run) print_search_stats(out, r.spmd.plan, r.spmd.plan_time_s, r.heuristic);
  if (r.spmd_run && r.spmd.left_out > 0) {
    out << "SPMD candidates left out, too large to simulate: " << r.spmd.left_out << " (the best: " << r.spmd.left_out_reason << ")\n";
  }
  if (r.pipeline_run) {
    out << "hybrid search: " << r.hybrid.considered << " plans fit memory by estimate, " << r.hybrid.judged.size()
        << " simulated; took " << format_time(r.hybrid.plan_time_s) << "\n";
  }
  if (r.kept) {
    out << "kept plan " << printable(r.kept->file) << ": "
        << (!r.kept->applies ? "does not apply here (" + printable(r.kept->why_not) + ")"
            : r.kept->chosen ? "the fastest, chosen"
            : format_double("%.4g", r.kept->samples_per_s) + " samples/s, " +
                  (r.kept->iteration_time_s > best.iteration_time_s ? "slower than" : "as fast as") + " the chosen plan")
        << "\n";
  }
}

void print_megatron_args(std::ostream& out, const MegatronArgs& exported) {
  out << "\nmegatron-lm arguments of the chosen plan: "
      << (exported.args.empty() ? "none: " + exported.why_not
                                : "\n  " + exported.args + "\n  (the model's own arguments, its architecture and tokenizer, come from its recipe)")
      << "\n";
}

}  // namespace hetsim::cli
