// File: base/field_override.cpp
#include "base/field_override.hpp"

#include <algorithm>

#include "base/input_error.hpp"
#include "base/text.hpp"
#include "base/yaml_tree.hpp"

namespace hetsim {
namespace {

// One step of a path: a key, an index, or every element.
struct Step {
  enum Kind { kKey, kIndex, kAll } kind = kKey;
  std::string key;
  size_t index = 0;
};

[[noreturn]] void fail(const FieldOverride& o, const std::string& message) {
  throw InputError("--set " + o.text(), "", message);
}

std::vector<Step> parse_path(const FieldOverride& o) {
  std::vector<Step> steps;
  const std::string& p = o.path;
  size_t i = 0;
  while (i < p.size()) {
    if (p[i] == '[') {
      const size_t close = p.find(']', i);
      if (close == std::string::npos) fail(o, "unclosed \"[\" in the field path");
      const std::string inside = p.substr(i + 1, close - i - 1);
      Step s;
      if (inside == "*") {
        s.kind = Step::kAll;
      } else if (!inside.empty() && inside.size() <= 9 && std::all_of(inside.begin(), inside.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        s.kind = Step::kIndex;
        s.index = std::stoul(inside);
      } else {
        fail(o, "\"[" + inside + "]\" is not a list index (write [0], [1], ... or [*])");
      }
      steps.push_back(s);
      i = close + 1;
      if (i < p.size() && p[i] == '.') {
        ++i;
        if (i == p.size()) fail(o, "the field path ends with \".\"");
      } else if (i < p.size() && p[i] != '[') {
        fail(o, "\"" + p.substr(i) + "\" follows \"[" + inside + "]\" without a \".\" (write [" + inside + "]." + p.substr(i) + ")");
      }
      continue;
    }
    size_t end = i;
    while (end < p.size() && p[end] != '.' && p[end] != '[') ++end;
    if (end == i) fail(o, "empty field name in the path");
    steps.push_back({Step::kKey, p.substr(i, end - i), 0});
    i = end;
    if (i < p.size() && p[i] == '.') {
      ++i;
      if (i == p.size()) fail(o, "the field path ends with \".\"");
    }
  }
  if (steps.empty()) fail(o, "no field named after \"" + o.input + ".\"");
  return steps;
}

std::vector<std::string> keys_of(const YAML::Node& map) {
  std::vector<std::string> keys;
  for (auto it = map.begin(); it != map.end(); ++it) keys.push_back(it->first.Scalar());
  return keys;
}

std::string shown(const std::string& input, const std::string& where) { return where.empty() ? input : input + "." + where; }

}  // namespace

std::string FieldOverride::shown_value() const {
  if (value.size() <= 100) return value;
  return value.substr(0, 60) + "... (" + std::to_string(value.size()) + " characters)";
}

std::string FieldOverride::text() const { return input + (path.empty() ? "" : "." + path) + "=" + shown_value(); }

namespace {

// Calls f on `node` and every value under it, aliases expanded (a walk with a stack of its own:
// a value's depth is bounded, but not by this function).
template <class F>
void for_each_node(const YAML::Node& node, F&& f) {
  std::vector<YAML::Node> stack{node};
  while (!stack.empty()) {
    const YAML::Node n = stack.back();
    stack.pop_back();
    f(n);
    if (n.IsMap()) {
      for (auto it = n.begin(); it != n.end(); ++it) stack.push_back(it->second);
    } else if (n.IsSequence()) {
      for (auto it = n.begin(); it != n.end(); ++it) stack.push_back(*it);
    }
  }
}

// The values `value` holds, aliases expanded (yaml_tree_problems has bounded them).
size_t values_in(const YAML::Node& value) {
  size_t n = 0;
  for_each_node(value, [&](const YAML::Node&) { ++n; });
  return n;
}

// Elements of the lists reached (a [*] as the last step writes into each).
size_t elements_of(const std::vector<std::pair<YAML::Node, std::string>>& at) {
  size_t n = 0;
  for (const auto& [node, where] : at) n += node.IsSequence() ? node.size() : 0;
  return n;
}

// A --set writes a copy of its value into every place its path reaches: a 64 KiB value of 30 000
// items into each of 10 000 node types would be 3e8 values (~140 GB). At most kMaxSetWrittenValues.
void check_written(const FieldOverride& o, const YAML::Node& value, size_t places) {
  const size_t each = values_in(value);
  if (places > 1 && each * places > kMaxSetWrittenValues) {
    fail(o, "writes its " + std::to_string(each) + " value(s) into each of " + std::to_string(places) + " places, " +
                std::to_string(each * places) + " in all; at most " + std::to_string(kMaxSetWrittenValues));
  }
}

// `arg` as a message shows it: over 100 characters, its first 60 and its length.
std::string shown_arg(std::string_view arg) {
  if (arg.size() <= 100) return std::string(arg);
  return std::string(arg.substr(0, 60)) + "... (" + std::to_string(arg.size()) + " characters)";
}

}  // namespace

FieldOverride parse_override(std::string_view arg, const std::vector<std::string>& inputs) {
  if (arg.size() > kMaxSetBytes) {
    throw InputError("--set " + shown_arg(arg), "",
                     "has " + std::to_string(arg.size()) + " characters; a --set is at most " + std::to_string(kMaxSetBytes) +
                         " (edit a copy of the file for a larger change)");
  }
  if (const std::optional<size_t> bad = utf8_error(arg)) {  // as a file holding those bytes is refused
    throw InputError("--set " + shown_arg(arg), "", "is not UTF-8 text (a bad byte at offset " + std::to_string(*bad) + ")");
  }
  const size_t eq = arg.find('=');
  FieldOverride o;
  if (eq == std::string_view::npos) throw InputError("--set " + shown_arg(arg), "", "expected PATH=VALUE, e.g. cluster.node_types[0].nic.bandwidth=400Gbps");
  if (eq > kMaxSetPathBytes) {
    throw InputError("--set " + shown_arg(arg), "",
                     "the field path has " + std::to_string(eq) + " characters; at most " + std::to_string(kMaxSetPathBytes));
  }
  const std::string path(arg.substr(0, eq));
  o.value = std::string(arg.substr(eq + 1));
  const size_t dot = path.find_first_of(".[");
  o.input = path.substr(0, dot);
  o.path = dot == std::string::npos ? "" : path.substr(dot + (path[dot] == '.' ? 1 : 0));
  if (std::find(inputs.begin(), inputs.end(), o.input) == inputs.end()) {
    std::string list;
    for (const std::string& in : inputs) list += (list.empty() ? "" : ", ") + in + ".";
    throw InputError("--set " + shown_arg(arg), "",
                     "the path must start with the input it edits (" + list + ")" + did_you_mean(o.input, inputs));
  }
  if (o.value.empty()) throw InputError("--set " + shown_arg(arg), "", "no value after \"=\"");
  // A line that is a YAML document marker ends the value there: what follows would be dropped unread.
  for (size_t at = 0; at != std::string::npos;) {
    const std::string_view line = std::string_view(o.value).substr(at, o.value.find('\n', at) - at);
    for (std::string_view m : {"---", "..."}) {
      if (line.starts_with(m) && (line.size() == 3 || line[3] == ' ' || line[3] == '\t' || line[3] == '\r')) {
        throw InputError("--set " + shown_arg(arg), "",
                         "the value holds a YAML document marker (a line \"" + std::string(m) + "\"); a --set value is one YAML value");
      }
    }
    at = o.value.find('\n', at);
    if (at != std::string::npos) ++at;
  }
  return o;
}

std::vector<FieldOverride> parse_overrides(const std::vector<std::string>& args, const std::vector<std::string>& inputs) {
  std::vector<FieldOverride> sets;
  for (const std::string& s : args) {
    sets.push_back(parse_override(s, inputs));
    const FieldOverride& o = sets.back();
    for (size_t j = 0; j + 1 < sets.size(); ++j) {
      if (sets[j].input == o.input && sets[j].path == o.path) {
        throw InputError("--set", "", o.input + "." + o.path + " is edited twice (" + sets[j].shown_value() + ", then " + o.shown_value() + "); give one value");
      }
    }
  }
  return sets;
}

std::vector<FieldOverride> overrides_for(const std::vector<FieldOverride>& all, std::string_view input) {
  std::vector<FieldOverride> out;
  for (const FieldOverride& o : all) {
    if (o.input == input) out.push_back(o);
  }
  return out;
}

void OverrideMarks::add(const YAML::Node& node, const std::string& origin) {
  if (origins_.empty() || origins_.back() != origin) origins_.push_back(origin);
  const size_t index = origins_.size() - 1;
  for_each_node(node, [&](const YAML::Node& n) { nodes_.emplace_back(n, index); });
}

std::string OverrideMarks::origin(const YAML::Node& node) const {
  // Latest first: a later --set may overwrite an earlier one's node.
  for (auto it = nodes_.rbegin(); it != nodes_.rend(); ++it) {
    if (it->first.is(node)) return origins_[it->second];
  }
  return {};
}

size_t OverrideMarks::text_bytes() const {
  size_t n = 0;
  for (const std::string& o : origins_) n += o.size();
  return n;
}

void apply_overrides(YAML::Node& root, const std::vector<FieldOverride>& sets, OverrideMarks& marks) {
  for (const FieldOverride& o : sets) {
    const std::vector<Step> steps = parse_path(o);
    YAML::Node value;
    try {
      value = YAML::Load(o.value);
    } catch (const YAML::Exception& e) {
      fail(o, "the value is not valid " + yaml_parse_problem(e, "").message.substr(std::string("invalid ").size()));
    }
    const std::vector<Diagnostic> problems = yaml_tree_problems(value, "--set " + o.text(), o.value.size());
    if (!problems.empty()) fail(o, problems.front().field.empty() ? problems.front().message
                                                               : problems.front().field + ": " + problems.front().message);
    // Nodes reached so far, with their paths.
    std::vector<std::pair<YAML::Node, std::string>> at{{root, ""}};
    for (size_t k = 0; k < steps.size(); ++k) {
      const Step& s = steps[k];
      const bool last = k + 1 == steps.size();
      if (last) check_written(o, value, s.kind == Step::kAll ? elements_of(at) : at.size());
      std::vector<std::pair<YAML::Node, std::string>> next;
      for (auto& [node, where] : at) {
        if (s.kind == Step::kKey) {
          if (!node.IsMap()) fail(o, shown(o.input, where) + " is not a mapping of fields: no \"" + s.key + "\" in it");
          const std::string child = where.empty() ? s.key : where + "." + s.key;
          const std::vector<std::string> keys = keys_of(node);
          if (std::find(keys.begin(), keys.end(), s.key) == keys.end() && !last) {
            fail(o, "no field \"" + s.key + "\" in " + shown(o.input, where) + did_you_mean(s.key, keys));
          }
          if (last) {
            node[s.key] = YAML::Clone(value);
            marks.add(node[s.key], o.text());
            continue;
          }
          next.emplace_back(node[s.key], child);
          continue;
        }
        if (!node.IsSequence()) fail(o, shown(o.input, where) + " is not a list: it takes no [index]");
        if (s.kind == Step::kIndex && s.index >= node.size()) {
          fail(o, shown(o.input, where) + " has " + std::to_string(node.size()) + " element(s): [" + std::to_string(s.index) +
                      "] is out of range");
        }
        const size_t lo = s.kind == Step::kAll ? 0 : s.index;
        const size_t hi = s.kind == Step::kAll ? node.size() : s.index + 1;
        for (size_t i = lo; i < hi; ++i) {
          const std::string child = where + "[" + std::to_string(i) + "]";
          if (last) {
            node[i] = YAML::Clone(value);
            marks.add(node[i], o.text());
          } else {
            next.emplace_back(node[i], child);
          }
        }
      }
      at = std::move(next);
    }
  }
}

}  // namespace hetsim
