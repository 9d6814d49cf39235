// File: studies/sweep/study_file.cpp
#include "studies/sweep/study_file.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>

#include "base/data_dir.hpp"
#include "base/field_override.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "base/yaml_reader.hpp"
#include "planner/strategies.hpp"

namespace hetsim {
namespace {

// Largest number of scenarios a study may expand to.
constexpr double kMaxScenarios = 1e6;

std::string flow_text(const YAML::Node& n) {
  if (n.IsScalar()) return n.Scalar();
  YAML::Emitter e;
  e << YAML::Flow << n;
  return e.c_str();
}

nlohmann::json axis_value(const StudyAxis& a, size_t i) {
  if (!a.names.empty()) return a.names[i];
  if (!a.is_flags()) return a.values[i];
  std::string joined;
  for (const std::string& f : a.flags[i]) joined += (joined.empty() ? "" : " ") + f;
  return joined;
}

// A value as what it means, so that one value written two ways is seen as one ("100Gbps" and
// "12.5GBps", "256" and "2.56e2"): a quantity of any unit kind by its kind and SI value, else the text.
std::string value_meaning(const std::string& text) {
  for (int u = 0; u <= static_cast<int>(Unit::kCount); ++u) {
    const ParsedQuantity q = parse_quantity(text, static_cast<Unit>(u));
    if (q.ok()) return std::to_string(u == static_cast<int>(Unit::kCount) ? -1 : u) + ":" + format_double("%.17g", q.value);
  }
  return "text:" + text;
}

// An axis's alternatives: the items of a list, or the values of a mapping whose keys name them
// (`names`, in file order). A name is a short printable word.
std::vector<YAML::Node> alternatives(const YAML::Node& node, const char* field, FieldReader& a, std::vector<std::string>& names) {
  std::vector<YAML::Node> out;
  if (node.IsSequence()) {
    for (const YAML::Node& v : node) out.push_back(v);
    return out;
  }
  for (const auto& kv : node) {  // (keys are plain scalars, each once: the reader refuses others)
    const std::string name = kv.first.Scalar();
    constexpr size_t kMaxName = 64;
    if (name.empty() || name.size() > kMaxName || printable(name) != name || name.find_first_of("\n\r\t") != std::string::npos) {
      const YAML::Mark m = kv.first.Mark();
      a.diagnostics().add(Diagnostic{a.file(), m.is_null() ? 0 : m.line + 1, m.is_null() ? 0 : m.column + 1, a.path() + "." + field,
                                     "a name of an alternative is a word of 1 to " + std::to_string(kMaxName) +
                                         " printable characters, not " + in_quotes(printable(name.substr(0, kMaxName)))});
    }
    names.push_back(name);
    out.push_back(kv.second);
  }
  return out;
}

// Whether two field paths can name one field: equal, one inside the other
// (cluster.node_types[0].nic and cluster.node_types[0].nic.bandwidth), or equal once a [*] is
// read as any index (node_types[*] and node_types[0]). Two flags axes (empty paths) overlap.
bool paths_overlap(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i] == '[' && b[j] == '[' && (a.compare(i, 3, "[*]") == 0 || b.compare(j, 3, "[*]") == 0)) {
      i = a.find(']', i);
      j = b.find(']', j);
      if (i == std::string::npos || j == std::string::npos) return false;
    } else if (a[i] != b[j]) {
      return false;
    }
    ++i;
    ++j;
  }
  // One ended: the other goes on into a field of it ("." or "[") or ends too.
  if (i == a.size() && j == b.size()) return true;
  const char next = i == a.size() ? b[j] : a[i];
  return a.empty() == b.empty() && (next == '.' || next == '[');
}

// cluster.node_types[K], K a number: a whole node type replaced.
bool replaces_node_type(const std::string& p) {
  constexpr std::string_view kHead = "cluster.node_types[";
  if (p.rfind(kHead, 0) != 0 || p.back() != ']') return false;
  const std::string index = p.substr(kHead.size(), p.size() - kHead.size() - 1);
  return !index.empty() && index.find_first_not_of("0123456789") == std::string::npos;
}

// cluster.node_types[*].FIELD...: a field of every node type.
bool edits_every_node_type(const std::string& p) { return p.rfind("cluster.node_types[*].", 0) == 0; }

}  // namespace

Study load_study(const std::filesystem::path& path) {
  const YamlFile file = YamlFile::load(path);
  Diagnostics diags;
  FieldReader r = file.root(diags);
  Study s;
  s.file = file.name();
  s.name = r.name("name");
  s.cluster_where = r.locate("cluster", "");
  s.model_where = r.locate("model", "");
  for (const char* key : {"cluster", "model"}) {
    const std::string v = r.text(key);
    if (v.empty()) r.error(key, std::string("is empty; expected a file next to the study or a shipped ") + key + "'s name");
    (std::string_view(key) == "cluster" ? s.cluster : s.model) = v.empty() ? "" : beside(path, v);
  }
  const std::optional<std::string> run = r.opt_choice("run", {"plan", "simulate"});
  const bool run_read = run.has_value() || !r.opt_node("run");  // a wrong run: is said once, at itself
  s.run = run.value_or("plan");
  s.strategy = r.opt_text("strategy").value_or("");
  if (!s.strategy.empty()) (void)r.opt_choice("strategy", strategy_names());  // said here, with its line
  if (std::optional<std::string> plan = r.opt_text("plan"); plan && plan->empty()) {
    r.error("plan", "is empty; give a plan file (found beside the study), or leave the field out");
  } else if (plan) {
    const std::filesystem::path p(*plan);
    s.plan = (p.is_absolute() ? p : path.parent_path() / p).string();
    std::error_code ec;  // (its text keys every scenario: read before any run reads it)
    if (!std::filesystem::exists(std::filesystem::symlink_status(s.plan, ec))) {  // (a dangling link: its reader says so)
      r.error("plan", s.plan + ": no such plan file (a relative plan: is found beside the study file)");
    } else if (const uintmax_t bytes = std::filesystem::file_size(s.plan, ec); !ec && bytes > kMaxYamlFileBytes) {
      r.error("plan", s.plan + " is " + std::to_string(bytes) + " bytes; an input file is at most " + std::to_string(kMaxYamlFileBytes));
    }
  }
  if (run_read && s.run == "simulate" && s.strategy.empty() && s.plan.empty() && !r.opt_node("plan")) {
    r.error("run", "simulate needs strategy: NAME or plan: FILE");
  }
  if (run_read && s.run == "plan" && (!s.strategy.empty() || !s.plan.empty())) r.error("run", "strategy and plan go with run: simulate");
  if (!s.strategy.empty() && !s.plan.empty()) r.error("plan", "give strategy or plan, not both");
  s.hold_plan = r.opt_flag("hold_plan").value_or(false);
  if (s.hold_plan && s.run != "plan") {
    r.error("hold_plan", "hold_plan goes with run: plan (a simulate study runs its strategy or plan on every scenario already)");
  }
  if (r.opt_node("vary")) {
    double product = 1;
    for (FieldReader& a : r.list("vary")) {
      StudyAxis axis;
      const std::optional<std::string> set = a.opt_text("set");
      const std::optional<YAML::Node> values = a.opt_node("values");
      const std::optional<YAML::Node> flags = a.opt_node("flags");
      if (set.has_value() == flags.has_value()) {
        a.error_here("an axis has either set: PATH with values: [...], or flags: [[...], ...]");
      } else if (set) {
        axis.path = *set;
        const Diagnostic at = a.locate("set", "");
        axis.line = at.line;
        axis.column = at.column;
        if (axis.path.rfind("cluster.", 0) != 0 && axis.path.rfind("model.", 0) != 0) {
          a.error("set", "a field path starts with cluster. or model.");
        }
        if (!values || !(values->IsSequence() || values->IsMap()) || values->size() == 0) {
          a.error("values", "expected a non-empty list of values, or a mapping of names to values");
        } else {
          for (const YAML::Node& v : alternatives(*values, "values", a, axis.names)) {
            axis.values.push_back(flow_text(v));
            // Each value becomes the --set PATH=VALUE of its scenarios: the same cap, said here.
            const size_t bytes = axis.path.size() + 1 + axis.values.back().size();
            if (bytes > kMaxSetBytes) {
              const YAML::Mark m = v.Mark();
              a.diagnostics().add(Diagnostic{s.file, m.is_null() ? 0 : m.line + 1, m.is_null() ? 0 : m.column + 1,
                                             a.path() + ".values[" + std::to_string(axis.values.size() - 1) + "]",
                                             "makes a --set of " + std::to_string(bytes) + " characters; at most " +
                                                 std::to_string(kMaxSetBytes) + " (edit a copy of the file for a larger change)"});
              axis.values.back().clear();
            }
          }
        }
      } else {
        const Diagnostic at = a.locate("flags", "");
        axis.line = at.line;
        axis.column = at.column;
        if (values) a.error("values", "a flags axis lists its alternatives under flags");
        if (!(flags->IsSequence() || flags->IsMap()) || flags->size() == 0) {
          a.error("flags", "expected a non-empty list of flag lists, e.g. [[], [--no-lp]], or a mapping of names to them");
        } else {
          for (const YAML::Node& alt : alternatives(*flags, "flags", a, axis.names)) {
            std::vector<std::string> one;
            if (alt.IsSequence()) {
              for (const YAML::Node& f : alt) {
                if (!f.IsScalar() || f.Scalar().rfind("--", 0) != 0) {
                  a.error("flags", (f.IsScalar() ? in_quotes(f.Scalar().substr(0, 80)) + " is not a flag" : std::string("a flag is a word")) +
                                       ": each starts with -- (an option's value goes with it: --global-batch=64)");
                  continue;
                }
                const std::string& word = f.Scalar();
                const auto names = [&word](const char* option) { return word == option || word.starts_with(std::string(option) + "="); };
                if (names("--cluster") || names("--model")) {
                  a.error("flags", in_quotes(word.substr(0, 80)) + ": the study's " + (names("--cluster") ? "cluster" : "model") +
                                       " field gives every scenario's; vary its fields with a set axis (a node type replaced whole: "
                                       "cluster.node_types[1])");
                } else if (names("--quiet")) {
                  a.error("flags", "--quiet is hetsim's own option (hetsim -q sweep), not a scenario's");
                }
                one.push_back(word);
              }
            } else {
              a.error("flags", "each alternative is a list of flags ([] for none)");
            }
            axis.flags.push_back(std::move(one));
          }
        }
      }
      // A --set among a flags axis's alternatives edits a field too: not one another axis varies
      // (its scenarios would be labelled with values they did not run).
      for (size_t j = 0; j < s.axes.size() && set.has_value() != flags.has_value(); ++j) {
        const StudyAxis& flagged = axis.is_flags() ? axis : s.axes[j];
        const StudyAxis& valued = axis.is_flags() ? s.axes[j] : axis;
        if (!flagged.is_flags() || valued.is_flags()) continue;
        for (const std::vector<std::string>& alt : flagged.flags) {
          for (const std::string& word : alt) {
            if (!word.starts_with("--set=")) continue;
            const std::string path = word.substr(6, word.find('=', 6) - 6);
            if (!paths_overlap(path, valued.path)) continue;
            a.error(axis.is_flags() ? "flags" : "set", "the flags axis's " + word.substr(0, 80) + " edits " + valued.path +
                                                           ", which a set axis varies; one axis per field (list the values in that axis)");
          }
        }
      }
      // Each field (or the flags) varied by one axis, each alternative listed once.
      // One exception: an axis that replaces a node type and one that edits a field of every node
      // type ("swap the V100 nodes, and also change every NIC"); their edits apply in axis order.
      for (size_t j = 0; j < s.axes.size(); ++j) {
        if (!paths_overlap(s.axes[j].path, axis.path) || s.axes[j].size() == 0 || set.has_value() == flags.has_value()) continue;
        const std::string& earlier = s.axes[j].path;
        if ((replaces_node_type(earlier) && edits_every_node_type(axis.path)) ||
            (edits_every_node_type(earlier) && replaces_node_type(axis.path))) {
          const bool replace_first = replaces_node_type(earlier);
          const std::string field = (replace_first ? axis.path : earlier).substr(std::string("cluster.node_types[*].").size());
          const std::string self = "vary[" + std::to_string(s.axes.size()) + "]", other = "vary[" + std::to_string(j) + "]";
          s.notes.push_back(
              other + " (" + earlier + ") and " + self + " (" + axis.path + ") edit one node type; they apply in axis order, so " +
              (replace_first ? self + "'s " + field + " holds on the replacing node type too"
                             : "the replacing node type keeps its own " + field + " (list the replacing axis first to change it too)"));
          continue;
        }
        const std::string first = "vary[" + std::to_string(j) + "] (line " + std::to_string(s.axes[j].line) + ")";
        if (set) {
          a.error("set", axis.path + " is already varied by " + first + (s.axes[j].path == axis.path ? "" : " (" + s.axes[j].path + ")") +
                             "; one axis per field (but for a node type replaced whole, node_types[K], and a field of every "
                             "node type, node_types[*].FIELD)");
        } else {
          a.error("flags", "a study has one flags axis, " + first + ": list every combination in it, e.g. "
                           "[[], [--no-lp], [--no-sfb], [--no-lp, --no-sfb]]");
        }
      }
      // (by what each alternative means, in one pass: an axis may list up to a million)
      std::map<std::string, size_t> first_of;
      for (size_t i = 0; i < axis.size(); ++i) {
        std::string meaning;
        if (axis.is_flags()) {
          std::vector<std::string> f = axis.flags[i];  // the same flags in another order
          std::sort(f.begin(), f.end());
          for (const std::string& x : f) meaning.append(x).push_back('\n');
        } else {
          meaning = value_meaning(axis.values[i]);
        }
        const auto [at, fresh] = first_of.emplace(std::move(meaning), i);
        if (fresh) continue;
        const size_t j = at->second;
        std::string text = axis.is_flags() ? "[" : "";
        text.append(axis.is_flags() ? axis_value(axis, i).get<std::string>() + "]" : axis.values[i]);
        text.append(" is listed twice (alternatives ").append(std::to_string(j)).append(" and ").append(std::to_string(i));
        if (!axis.is_flags() && axis.values[i] != axis.values[j]) text.append(", ").append(axis.values[j]).append(" written another way");
        a.error(axis.is_flags() ? "flags" : "values", text + "): the scenarios would repeat");
      }
      a.finish();
      product *= static_cast<double>(std::max<size_t>(axis.size(), 1));
      s.axes.push_back(std::move(axis));
    }
    if (product > kMaxScenarios) {  // (in floating point: the product of many long axes passes any integer type)
      r.error("vary", "the axes make " + format_double(product < 1e15 ? "%.0f" : "%.3g", product) + " scenarios; at most 1000000");
    }
    if (s.hold_plan && std::any_of(s.axes.begin(), s.axes.end(), [](const StudyAxis& a) { return a.is_flags(); })) {
      r.error("hold_plan", "a held plan is never re-planned, so planner flags would change nothing: drop the flags axis or hold_plan");
    }
  }
  r.finish();
  diags.throw_if_any();
  return s;
}

size_t scenario_count(const Study& study) {
  size_t total = 1;
  for (const StudyAxis& a : study.axes) total *= a.size();
  return total;
}

Scenario scenario_at(const Study& study, size_t index) {
  Scenario sc;
  sc.index = index;
  sc.axes = nlohmann::json::object();
  size_t rest = index;
  std::vector<size_t> pick(study.axes.size());
  for (size_t k = study.axes.size(); k-- > 0;) {  // the last axis varies fastest
    pick[k] = rest % study.axes[k].size();
    rest /= study.axes[k].size();
  }
  for (size_t k = 0; k < study.axes.size(); ++k) {
    const StudyAxis& a = study.axes[k];
    if (a.is_flags()) {
      sc.flags.insert(sc.flags.end(), a.flags[pick[k]].begin(), a.flags[pick[k]].end());
      sc.axes["flags"] = axis_value(a, pick[k]);
    } else {
      sc.sets.push_back(a.path + "=" + a.values[pick[k]]);
      sc.axes[a.path] = axis_value(a, pick[k]);
    }
  }
  return sc;
}

std::vector<std::string> scenario_args(const Study& study, const Scenario& s, const std::string& baseline_plan) {
  const bool held = study.run == "plan" && study.hold_plan && !baseline_plan.empty();
  std::vector<std::string> args{held ? "simulate" : study.run, "--cluster", study.cluster, "--model", study.model};
  if (!study.strategy.empty()) args.insert(args.end(), {"--strategy", study.strategy});
  if (!study.plan.empty()) args.insert(args.end(), {"--plan", study.plan});
  if (held) args.insert(args.end(), {"--plan", baseline_plan});
  if (study.run == "plan" && !study.hold_plan && !baseline_plan.empty() && s.flags.empty()) {
    args.insert(args.end(), {"--keep-plan", baseline_plan});
  }
  for (const std::string& set : s.sets) args.insert(args.end(), {"--set", set});
  args.insert(args.end(), s.flags.begin(), s.flags.end());
  return args;
}

std::string plans_policy(const Study& study) {
  if (study.run != "plan") return "plans: none made (run: simulate runs the study's own strategy or plan on every scenario)";
  if (study.hold_plan) {
    return "plans: held (hold_plan: true): the baseline's plan (the study's cluster and model as written, planned once) simulated on "
           "every scenario, never re-planned: what the hardware alone is worth";
  }
  const bool flags = std::any_of(study.axes.begin(), study.axes.end(), [](const StudyAxis& a) { return a.is_flags(); });
  return std::string("plans: re-planned per scenario, the baseline's plan (the study's cluster and model as written, planned once) "
                     "simulated beside each scenario's candidates, so a change never looks worse because the search missed") +
         (flags ? "; scenarios with planner flags plan without it (their point is the search)" : "") + " (hold_plan: true holds it instead)";
}

}  // namespace hetsim
