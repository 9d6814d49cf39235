// File: base/field_override.hpp
// `--set PATH=VALUE`: an edit of an input's YAML before it is read, for one-off what-ifs and the
// axes of a study. PATH starts with the input it edits (`cluster.` or `model.`) and names a field
// by keys and list indices (`cluster.node_types[1].nic.bandwidth`; `[*]` is every element);
// VALUE is YAML (`400Gbps`, `[1, 2]`, `{count: 8}`). The edited input is then read and checked
// like the file itself; problems in what a --set wrote are reported against the --set.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hetsim {

// The longest --set argument (PATH=VALUE) and study axis value accepted: 64 KiB, far above any
// field's value (a whole node type is under 1 KB) and small enough that the tree it builds stays
// a few megabytes. A larger edit belongs in a copy of the file.
inline constexpr size_t kMaxSetBytes = 65536;
// The longest field path of a --set.
inline constexpr size_t kMaxSetPathBytes = 1024;
// The most values a --set may write, its value's copies into every place its path reaches ([*])
// together.
inline constexpr size_t kMaxSetWrittenValues = 1'000'000;

struct FieldOverride {
  std::string input;  // "cluster" | "model"
  std::string path;   // the field inside that input: "node_types[1].nic.bandwidth"
  std::string value;  // YAML text
  // For messages: "cluster.node_types[1].nic.bandwidth=400Gbps", a value over 100 characters cut
  // to its first 60 and its length (a message never repeats a 120 KB value).
  [[nodiscard]] std::string text() const;
  [[nodiscard]] std::string shown_value() const;  // the value as text() shows it
};

// Parses "PATH=VALUE"; `inputs` are the accepted first components. Throws InputError, also for
// an argument over kMaxSetBytes or a path over kMaxSetPathBytes.
[[nodiscard]] FieldOverride parse_override(std::string_view arg, const std::vector<std::string>& inputs = {"cluster", "model"});
// Parses every "PATH=VALUE" in order (parse_override) and refuses a field edited twice: of two
// edits, the later silently won. Throws InputError.
[[nodiscard]] std::vector<FieldOverride> parse_overrides(const std::vector<std::string>& args,
                                                         const std::vector<std::string>& inputs = {"cluster", "model"});
// The overrides of one input, in order.
[[nodiscard]] std::vector<FieldOverride> overrides_for(const std::vector<FieldOverride>& all, std::string_view input);

// The nodes of a YAML tree that overrides wrote, each with the --set that wrote it. Each --set's
// text is held once, not once per node it wrote (a list of 20 000 items once held 20 000 copies).
class OverrideMarks {
 public:
  void add(const YAML::Node& node, const std::string& origin);  // the node and everything under it
  // The --set text that wrote `node`, or empty.
  [[nodiscard]] std::string origin(const YAML::Node& node) const;
  [[nodiscard]] bool empty() const { return nodes_.empty(); }
  [[nodiscard]] size_t size() const { return nodes_.size(); }  // nodes marked
  [[nodiscard]] size_t text_bytes() const;                      // of the origins held

 private:
  std::vector<std::string> origins_;
  std::vector<std::pair<YAML::Node, size_t>> nodes_;  // a node and the index of its origin
};

// Applies `sets` to `root` in order, recording what they wrote in `marks`. A path that does not
// resolve (a missing field on the way, an index out of range, a key on a list) throws InputError
// naming the --set, with the nearest field name suggested. A missing last key is created: the
// reader of the input then accepts or rejects it like any other key.
void apply_overrides(YAML::Node& root, const std::vector<FieldOverride>& sets, OverrideMarks& marks);

}  // namespace hetsim
