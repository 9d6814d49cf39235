// File: base/yaml_tree.cpp
#include "base/yaml_tree.hpp"

#include <yaml-cpp/depthguard.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <utility>

#include "base/text.hpp"

namespace hetsim {
namespace {

Diagnostic at(const YAML::Node& node, const std::string& file, const std::string& field, std::string message) {
  const YAML::Mark m = node.Mark();
  const bool known = !m.is_null() && m.line >= 0;
  return Diagnostic{file, known ? m.line + 1 : 0, known ? m.column + 1 : 0, field, std::move(message)};
}

struct Visit {
  YAML::Node node;
  std::string label;  // ".key" or "[i]" under its parent; empty for the root
  size_t depth;       // of `node`: the root is 0
};

// A problem when `text` (a scalar or a key) is not UTF-8: hetsim reads every input as UTF-8, and
// such bytes would reach reports, databases and terminals.
void check_utf8(const YAML::Node& node, const std::string& text, const std::string& file, const std::string& field,
                std::vector<Diagnostic>& found) {
  const std::optional<size_t> bad = utf8_error(text);
  if (!bad) return;
  char byte[8];
  std::snprintf(byte, sizeof byte, "0x%02X", static_cast<unsigned char>(text[*bad]));
  found.push_back(at(node, file, field,
                     "is not valid UTF-8 (byte " + std::to_string(*bad + 1) + " of the text is " + byte +
                         "); hetsim reads every input as UTF-8"));
}

// "a.b[2].c" from the labels of the path's nodes, root first.
std::string joined(const std::vector<std::string>& labels) {
  std::string path;
  for (const std::string& l : labels) path.append(l);
  if (!path.empty() && path[0] == '.') path.erase(0, 1);
  return path;
}

// The same for a path too deep to print: its first levels, then how many more.
std::string joined_short(const std::vector<std::string>& labels) {
  constexpr size_t kShown = 8;
  if (labels.size() <= kShown + 1) return joined(labels);
  return joined({labels.begin(), labels.begin() + kShown + 1}) + "... (" + std::to_string(labels.size() - kShown - 1) + " more levels)";
}

// `how_deep`: "257 levels deep here".
std::string too_deep(const std::string& how_deep) {
  return "nested " + how_deep + "; an input nests at most " + std::to_string(kMaxYamlDepth) + " levels (the shipped ones fewer than 10)";
}

}  // namespace

Diagnostic yaml_parse_problem(const YAML::Exception& e, const std::string& file) {
  const bool known = !e.mark.is_null() && e.mark.line >= 0;
  const int line = known ? e.mark.line + 1 : 0, column = known ? e.mark.column + 1 : 0;
  if (const auto* deep = dynamic_cast<const YAML::DeepRecursion*>(&e)) {
    return Diagnostic{file, line, column, "",
                      "invalid YAML: " + too_deep(std::to_string(deep->depth()) + " or more levels deep (the YAML reader stopped here)")};
  }
  return Diagnostic{file, line, column, "", "invalid YAML: " + e.msg};
}

std::vector<Diagnostic> yaml_tree_problems(const YAML::Node& root, const std::string& file, size_t text_bytes) {
  const size_t max_values = std::max(kMaxYamlValues, text_bytes);
  std::vector<Diagnostic> found;
  // The node being visited and its ancestors, root first, with their labels (paths are built
  // only for a message: the walk itself stays cheap).
  std::vector<YAML::Node> ancestors;
  std::vector<std::string> labels;
  std::vector<Visit> stack{{root, "", 0}};
  size_t values = 0;
  while (!stack.empty()) {
    Visit v = std::move(stack.back());
    stack.pop_back();
    ancestors.resize(v.depth);
    labels.resize(v.depth);
    labels.push_back(std::move(v.label));
    // yaml-cpp gives an alias the very node of its anchor: meeting an ancestor again is a cycle.
    for (const YAML::Node& a : ancestors) {
      if (a.is(v.node)) {
        found.push_back(at(v.node, file, joined(labels),
                           "an alias (*name) refers to a value that contains it, so the value never ends; "
                           "write the value out instead"));
        return found;
      }
    }
    if (++values > max_values) {
      found.push_back(at(v.node, file, joined(labels),
                         "the document expands through its aliases (*name) to more than " + std::to_string(max_values) +
                             " values; write the repeated parts out, or nest fewer aliases"));
      return found;
    }
    if (v.depth > static_cast<size_t>(kMaxYamlDepth)) {
      found.push_back(at(v.node, file, joined_short(labels), too_deep(std::to_string(v.depth) + " levels deep here")));
      return found;
    }
    ancestors.push_back(v.node);
    // A tag of its own (!name) asks for a type hetsim has not: refused, not read as if absent. The
    // core schema's (!!str, !!int, ...) and none ("?" plain, "!" quoted) are read as usual.
    if (const std::string& tag = v.node.Tag(); !tag.empty() && tag != "?" && tag != "!" && !tag.starts_with("tag:yaml.org,2002:")) {
      found.push_back(at(v.node, file, joined(labels), "a YAML tag (" + printable(tag) + ") that hetsim does not read; leave it out"));
    }
    if (v.node.IsScalar()) check_utf8(v.node, v.node.Scalar(), file, joined(labels), found);
    if (v.node.IsSequence()) {
      // Pushed last first, so the walk (and the duplicate-key report) goes in document order.
      for (size_t i = v.node.size(); i-- > 0;) {
        std::string label("[");
        label.append(std::to_string(i)).append("]");
        stack.push_back({v.node[i], std::move(label), v.depth + 1});
      }
    } else if (v.node.IsMap()) {
      std::map<std::string, int> seen;  // key -> 1-based line of its first occurrence
      std::vector<Visit> children;
      for (auto it = v.node.begin(); it != v.node.end(); ++it) {
        if (!it->first.IsScalar()) {
          found.push_back(at(it->first, file, joined(labels), "a key must be a plain name, not a list or a mapping"));
          continue;
        }
        const std::string& key = it->first.Scalar();
        if (utf8_error(key)) {
          check_utf8(it->first, key, file, joined(labels), found);
          continue;
        }
        const YAML::Mark m = it->first.Mark();
        const int line = m.is_null() ? 0 : m.line + 1;
        const auto [first, fresh] = seen.emplace(key, line);
        if (!fresh) {
          std::string field = joined(labels);
          if (!field.empty()) field.append(".");
          field.append(key);
          found.push_back(Diagnostic{file, line, m.is_null() ? 0 : m.column + 1, field,
                                     "written twice (first on line " + std::to_string(first->second) + "); keep one"});
        }
        children.push_back({it->second, "." + key, v.depth + 1});
      }
      // Moved in by construction, never assigned: assigning a YAML::Node writes into the node it refers to.
      for (auto c = children.rbegin(); c != children.rend(); ++c) stack.emplace_back(std::move(*c));
    }
  }
  std::stable_sort(found.begin(), found.end(), [](const Diagnostic& a, const Diagnostic& b) { return a.line < b.line; });
  return found;
}

}  // namespace hetsim
