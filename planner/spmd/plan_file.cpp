// File: planner/spmd/plan_file.cpp
#include "planner/spmd/plan_file.hpp"

#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <sstream>

#include "base/text.hpp"
#include "base/yaml_reader.hpp"

namespace hetsim {

namespace {

// Unknown or missing operators named in a message at most; the rest are counted.
constexpr size_t kNamedOperators = 10;

std::string exact(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}
}  // namespace

std::string plan_to_yaml(const PlanFile& plan, const SpmdProblem& p) {
  std::ostringstream out;
  out << "# hetsim SPMD plan: " << plan.model << " on " << plan.cluster << "\n"
      << "# planner estimate: " << exact(plan.candidate.estimate_s) << " s per iteration\n"
      << "kind: spmd\n"
      << "model: " << plan.model << "\n"
      << "cluster: " << plan.cluster << "\n"
      << "options: {cost: " << (plan.options.cost == CostMode::kBarrier ? "barrier" : "overlap")
      << ", grouped_collectives: " << (plan.options.grouped_collectives ? "true" : "false") << "}\n"
      << "ratios: [";
  for (size_t d = 0; d < plan.candidate.ratios.size(); ++d) out << (d ? ", " : "") << exact(plan.candidate.ratios[d]);
  out << "]\n";
  if (!plan.node_types.empty()) {  // runs of GPUs of one node type, in cluster order
    out << "node_types:\n";
    for (size_t d = 0; d < plan.node_types.size();) {
      size_t e = d;
      while (e < plan.node_types.size() && plan.node_types[e] == plan.node_types[d]) ++e;
      out << "  - {name: " << plan.node_types[d] << ", gpus: " << e - d << "}\n";
      d = e;
    }
  }
  out << "ops:\n";
  for (size_t i = 0; i < p.ops.size(); ++i) {
    const OpChoice& c = plan.candidate.program.choices[i];
    out << "  - {name: " << p.ops[i].name << ", rule: " << p.ops[i].rules[c.rule].name;
    if (c.sfb) out << ", sfb: true";
    out << "}\n";
  }
  return out.str();
}

namespace {

// The plan's node_types (runs of {name, gpus}) against the run's cluster's, GPU by GPU.
void check_node_types(FieldReader& r, const std::vector<std::string>& cluster_types, std::vector<std::string>& out) {
  for (FieldReader& run : r.list("node_types")) {
    const std::string name = run.name("name");
    const long gpus = run.integer("gpus", 1, static_cast<long>(FieldReader::kMaxListEntries));
    run.finish();
    if (out.size() + static_cast<size_t>(std::max(0L, gpus)) > FieldReader::kMaxListEntries) {
      r.error("node_types", "more GPUs than any cluster hetsim reads (" + std::to_string(FieldReader::kMaxListEntries) + ")");
      return;
    }
    out.insert(out.end(), static_cast<size_t>(std::max(0L, gpus)), name);
  }
  if (cluster_types.empty() || out.empty()) return;
  if (out.size() != cluster_types.size()) {
    r.error("node_types", "planned for " + std::to_string(out.size()) + " GPUs; this cluster has " +
                              std::to_string(cluster_types.size()) + ": plan again");
    return;
  }
  for (size_t g = 0; g < out.size(); ++g) {
    if (out[g] == cluster_types[g]) continue;
    r.error("node_types", "gpu" + std::to_string(g) + " was on node type " + in_quotes(out[g]) + " when planned and is on " +
                              in_quotes(cluster_types[g]) + " in this cluster: adding or removing nodes renumbers the GPUs "
                              "after them, and the shares would land on other GPUs; plan again");
    return;
  }
}

}  // namespace

PlanFile load_plan(const std::filesystem::path& path, const SpmdProblem& p, const std::string& model, const std::string& cluster,
                   const std::vector<std::string>& node_types) {
  const YamlFile file = YamlFile::load(path);
  Diagnostics diags;
  FieldReader r = file.root(diags);
  PlanFile plan;
  (void)r.choice("kind", {"spmd"});
  plan.model = r.text("model");
  plan.cluster = r.text("cluster");
  if (!model.empty() && !plan.model.empty() && plan.model != model) {
    r.error("model", "this plan is for " + in_quotes(plan.model) + ", not for the model of this run, " + in_quotes(model));
  }
  if (!cluster.empty() && !plan.cluster.empty() && plan.cluster != cluster) {
    r.error("cluster", "this plan is for " + in_quotes(plan.cluster) + ", not for the cluster of this run, " + in_quotes(cluster));
  }
  diags.throw_if_any();  // another run's plan: checking its operators and shares against this one's says nothing more
  FieldReader opts = r.child("options");
  plan.options.cost = opts.choice("cost", {"barrier", "overlap"}) == "barrier" ? CostMode::kBarrier : CostMode::kOverlap;
  plan.options.grouped_collectives = opts.opt_flag("grouped_collectives").value_or(true);
  opts.finish();
  const size_t before_ratios = diags.size();
  const std::vector<double> ratios = r.numbers("ratios", 0, 1);
  if (!ratios.empty() && diags.size() == before_ratios) {  // (a share already refused is not also missing)
    double sum = 0;
    for (double x : ratios) sum += x;
    if (static_cast<int>(ratios.size()) != p.devices) {
      r.error("ratios", std::to_string(ratios.size()) + " shares for " + std::to_string(p.devices) + " GPUs");
    } else if (std::fabs(sum - 1) > 1e-9) {
      r.error("ratios", "shares must sum to 1 (they sum to " + exact(sum) + ")");
    }
  }
  if (r.opt_node("node_types")) check_node_types(r, node_types, plan.node_types);
  // Operators are matched by name, in any order: a plan missing one (or written before the model
  // gained one) reports what is missing or unknown, not every operator after it.
  std::map<std::string, size_t, std::less<>> index_of;
  for (size_t i = 0; i < p.ops.size(); ++i) index_of.emplace(p.ops[i].name, i);
  std::vector<std::optional<OpChoice>> chosen(p.ops.size());
  std::vector<int> line_of(p.ops.size(), 0);  // where each operator was first given
  std::vector<FieldReader> ops = r.list("ops");
  std::vector<std::string> unknown;
  // Fewer samples at once than GPUs: the problem offers no batch split (build_spmd_problem), and a plan
  // of "data" rules fails on the run's batch, not on its operators: said once, naming the batch.
  const double at_once = p.accumulation > 0 ? static_cast<double>(p.samples) / p.accumulation : static_cast<double>(p.samples);
  const bool no_batch_split = at_once < p.devices;
  bool batch_said = false;
  for (FieldReader& o : ops) {
    const size_t problems = diags.size();
    const std::string name = o.text("name");
    const std::string rule = o.text("rule");
    const bool sfb = o.opt_flag("sfb").value_or(false);
    o.finish();
    if (diags.size() != problems) continue;
    const auto at = index_of.find(name);
    if (at == index_of.end()) {
      unknown.push_back(name);
      if (unknown.size() <= kNamedOperators) {
        std::vector<std::string> names;
        for (const auto& [known, i] : index_of) names.push_back(known);
        o.error("name", in_quotes(name) + " is not an operator of " + plan.model + did_you_mean(name, names));
      }
      continue;
    }
    const size_t i = at->second;
    const int line = o.locate("name", "").line;
    if (line_of[i] != 0) {
      o.error("name", in_quotes(name) + " is listed twice (first on line " + std::to_string(line_of[i]) + "); keep one");
      continue;
    }
    line_of[i] = line > 0 ? line : -1;
    std::vector<std::string> names;
    int found = -1;
    for (size_t k = 0; k < p.ops[i].rules.size(); ++k) {
      names.push_back(p.ops[i].rules[k].name);
      if (names.back() == rule) found = static_cast<int>(k);
    }
    if (found < 0 && rule == "data" && no_batch_split) {
      if (!batch_said) {
        o.error("rule", "\"data\" splits the batch over the GPUs, but this run gives " + format_double("%g", at_once) +
                            " samples at once to its " + std::to_string(p.devices) +
                            " GPUs, fewer than one each: raise the global batch (--global-batch or the model's training.global_batch), "
                            "or give a plan without data rules");
      }
      batch_said = true;
      continue;
    }
    if (found < 0) {
      o.error("rule", in_quotes(rule) + " is not a rule of " + name + " (" + join(names) + ")" + did_you_mean(rule, names));
      continue;
    }
    if (sfb && !(p.ops[i].rules[found].gradient_sync && p.ops[i].kind == OpKind::kLinear && p.ops[i].inputs.size() == 1)) {
      o.error("sfb", "sufficient factor broadcasting applies to a linear layer whose weight gradient is all-reduced "
                     "(rule with gradient sync, one input); " + name + " under " + rule + " is not one");
      continue;
    }
    chosen[i] = OpChoice{found, sfb};
  }
  if (unknown.size() > kNamedOperators) {
    r.error("ops", std::to_string(unknown.size() - kNamedOperators) + " more operator(s) that " + plan.model + " does not have");
  }
  std::vector<std::string> missing;
  for (size_t i = 0; i < p.ops.size(); ++i) {
    if (line_of[i] == 0) missing.push_back(p.ops[i].name);
  }
  if (!missing.empty() && !ops.empty()) {
    std::string list;
    for (size_t k = 0; k < missing.size() && k < kNamedOperators; ++k) list += (k ? ", " : "") + missing[k];
    if (missing.size() > kNamedOperators) list += " and " + std::to_string(missing.size() - kNamedOperators) + " more";
    r.error("ops", std::to_string(missing.size()) + " of the model's " + std::to_string(p.ops.size()) +
                       " operators are missing: " + list + " (a plan gives every operator a rule)");
  }
  for (const std::optional<OpChoice>& c : chosen) {
    if (c) plan.candidate.program.choices.push_back(*c);
  }
  r.finish();
  diags.throw_if_any();
  plan.candidate.ratios = ratios;
  plan.candidate.estimate_s = program_cost(p, ratios, plan.options, plan.candidate.program.choices);
  plan.candidate.program.cost_s = plan.candidate.estimate_s;
  return plan;
}

}  // namespace hetsim
