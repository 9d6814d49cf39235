// File: base/yaml_tree.hpp
// The shape checks every YAML input passes before anything reads it: a tree (no alias that
// refers to a node containing it), of bounded size once aliases are expanded (no "billion laughs"),
// bounded depth, no key written twice in one mapping (yaml-cpp keeps both and reads the first),
// and every key and value valid UTF-8 (names end in reports, databases and JSON).
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <string>
#include <vector>

#include "base/input_error.hpp"

namespace hetsim {

// Deepest nesting of mappings and lists accepted (the shipped inputs use under 10 levels).
inline constexpr int kMaxYamlDepth = 256;
// Values a document may expand to through aliases: this many, or the document's size in bytes
// when larger (without aliases a document holds fewer values than it has bytes).
inline constexpr size_t kMaxYamlValues = 100'000;

// A YAML text that yaml-cpp could not parse, as a problem located in `file`. Its depth guard
// (2000 levels, reported as "bad file") is said as how deep and where.
[[nodiscard]] Diagnostic yaml_parse_problem(const YAML::Exception& e, const std::string& file);

// The problems of `root`, located in `file`; empty when it is fine. `text_bytes`: the document's
// size. Stops at the first cycle, size or depth problem; reports every duplicate key and every
// text that is not UTF-8.
[[nodiscard]] std::vector<Diagnostic> yaml_tree_problems(const YAML::Node& root, const std::string& file,
                                                         size_t text_bytes);

}  // namespace hetsim
