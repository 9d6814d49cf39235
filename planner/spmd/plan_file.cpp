// File: planner/spmd/plan_file.cpp
#include "planner/spmd/plan_file.hpp"

#include <cmath>
#include <cstdio>
#include <sstream>

#include "base/text.hpp"
#include "base/yaml_reader.hpp"

namespace hetsim {

namespace {
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
  out << "]\nops:\n";
  for (size_t i = 0; i < p.ops.size(); ++i) {
    const OpChoice& c = plan.candidate.program.choices[i];
    out << "  - {name: " << p.ops[i].name << ", rule: " << p.ops[i].rules[c.rule].name;
    if (c.sfb) out << ", sfb: true";
    out << "}\n";
  }
  return out.str();
}

PlanFile load_plan(const std::filesystem::path& path, const SpmdProblem& p, const std::string& model, const std::string& cluster) {
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
  std::vector<FieldReader> ops = r.list("ops");
  if (!ops.empty() && ops.size() != p.ops.size()) {
    r.error("ops", std::to_string(ops.size()) + " operators, but the model has " + std::to_string(p.ops.size()));
  }
  for (size_t i = 0; i < ops.size() && i < p.ops.size(); ++i) {
    FieldReader& o = ops[i];
    const std::string name = o.text("name");
    const std::string rule = o.text("rule");
    const bool sfb = o.opt_flag("sfb").value_or(false);
    o.finish();
    if (name != p.ops[i].name) {
      o.error("name", in_quotes(name) + " is not the model's operator " + std::to_string(i) + " (" + p.ops[i].name + ")");
      continue;
    }
    std::vector<std::string> names;
    int found = -1;
    for (size_t k = 0; k < p.ops[i].rules.size(); ++k) {
      names.push_back(p.ops[i].rules[k].name);
      if (names.back() == rule) found = static_cast<int>(k);
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
    plan.candidate.program.choices.push_back({found, sfb});
  }
  r.finish();
  diags.throw_if_any();
  plan.candidate.ratios = ratios;
  plan.candidate.estimate_s = program_cost(p, ratios, plan.options, plan.candidate.program.choices);
  plan.candidate.program.cost_s = plan.candidate.estimate_s;
  return plan;
}

}  // namespace hetsim
