// File: base/yaml_reader.hpp
// Strict reading of YAML inputs: every field is asked for by name, with its kind and bounds;
// keys nobody asked for are errors (with the nearest valid key suggested); all problems of a file
// are collected into one Diagnostics and thrown together by the caller.
#pragma once

#include <yaml-cpp/yaml.h>

#include <climits>
#include <filesystem>
#include <initializer_list>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/field_override.hpp"
#include "base/input_error.hpp"
#include "base/units.hpp"

namespace hetsim {

// kLatency: a non-negative time of at most 1 s (a link's or a kernel launch's fixed cost; more is
// no hardware's, and SimGrid cannot finish a run whose messages never arrive).
// kLinkRate: a link's bandwidth, at least 1 MB/s (8 Mb/s, slower than any network a GPU cluster
// is built on: a step over such a link takes hours, and SimGrid's timers lose their precision
// against transfers that long).
enum class Bound { kPositive, kNonNegative, kLatency, kLinkRate };

// A view of one YAML mapping at a field path. Required getters record a diagnostic and return a
// neutral value on error, so the caller reads everything and then calls Diagnostics::throw_if_any()
// before building anything from the values.
class FieldReader {
 public:
  // `marks`: nodes written by --set overrides; problems with them name the --set, not the file.
  FieldReader(YAML::Node node, std::string path, std::shared_ptr<const std::string> file, Diagnostics* diags,
              std::shared_ptr<const OverrideMarks> marks = nullptr);

  [[nodiscard]] std::string text(std::string_view key);
  // A required name shown in summaries: 1 to 256 characters, none of them a control character.
  [[nodiscard]] std::string name(std::string_view key);
  [[nodiscard]] std::optional<std::string> opt_text(std::string_view key);
  // One of `allowed`; the message lists them.
  [[nodiscard]] std::string choice(std::string_view key, std::initializer_list<std::string_view> allowed);
  [[nodiscard]] std::optional<std::string> opt_choice(std::string_view key,
                                                      std::initializer_list<std::string_view> allowed);
  [[nodiscard]] std::string choice(std::string_view key, const std::vector<std::string>& allowed);
  [[nodiscard]] std::optional<std::string> opt_choice(std::string_view key, const std::vector<std::string>& allowed);
  [[nodiscard]] double quantity(std::string_view key, Unit unit, Bound bound = Bound::kPositive);
  [[nodiscard]] std::optional<double> opt_quantity(std::string_view key, Unit unit, Bound bound = Bound::kPositive);
  // A required quantity of at least `min` (in base units): below it the message says "expected at
  // least <least>" (e.g. "1GBps, less than any GPU's memory has"). Device figures use it.
  [[nodiscard]] double quantity_at_least(std::string_view key, Unit unit, double min, std::string_view least);
  [[nodiscard]] std::optional<double> opt_quantity_at_least(std::string_view key, Unit unit, double min, std::string_view least);
  [[nodiscard]] long integer(std::string_view key, long min, long max = LONG_MAX);
  [[nodiscard]] std::optional<long> opt_integer(std::string_view key, long min, long max = LONG_MAX);
  // A plain number (ratios, efficiencies) within [min, max].
  [[nodiscard]] double number(std::string_view key, double min, double max);
  [[nodiscard]] std::optional<double> opt_number(std::string_view key, double min, double max);
  [[nodiscard]] std::optional<bool> opt_flag(std::string_view key);
  // A required, non-empty list of plain numbers within [min, max].
  [[nodiscard]] std::vector<double> numbers(std::string_view key, double min, double max);
  // The same list when the key is present (with the same checks); nothing when it is absent.
  [[nodiscard]] std::optional<std::vector<double>> opt_numbers(std::string_view key, double min, double max);
  // A required, non-empty list of names (each as name() checks it: 1 to 256 printable characters).
  [[nodiscard]] std::vector<std::string> names(std::string_view key);

  // Nested mapping; a missing required child yields an empty reader (after a diagnostic).
  [[nodiscard]] FieldReader child(std::string_view key);
  [[nodiscard]] std::optional<FieldReader> opt_child(std::string_view key);
  // The raw YAML of `key` (values handed on as YAML text, such as a study's axis values).
  [[nodiscard]] std::optional<YAML::Node> opt_node(std::string_view key);
  // A required, non-empty sequence of mappings, of at most kMaxListEntries (no input needs more
  // entries than a cluster has GPUs; each becomes a value of its own, a node type ~1 KB).
  static constexpr size_t kMaxListEntries = 131072;
  [[nodiscard]] std::vector<FieldReader> list(std::string_view key);

  // Reports keys present in the mapping but never asked for. Call once, after all getters.
  void finish();

  // A problem with the value of `key` (or with the mapping itself when the key is absent).
  void error(std::string_view key, std::string message);
  void error_here(std::string message);

  // Whether this is a mapping whose fields can be read: false for a list entry that is not one, or a
  // missing child (already reported once; checks of its fields' values would only repeat it).
  [[nodiscard]] bool readable() const { return valid_map_ && !absent_; }
  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] const std::string& file() const { return *file_; }
  [[nodiscard]] Diagnostics& diagnostics() const { return *diags_; }
  // 1-based line of `key`'s value, or of the mapping when absent (for messages built later).
  [[nodiscard]] Diagnostic locate(std::string_view key, std::string message) const;

 private:
  [[nodiscard]] std::optional<YAML::Node> lookup(std::string_view key, bool required);
  [[nodiscard]] std::optional<std::string> scalar(std::string_view key, bool required);
  [[nodiscard]] std::string field(std::string_view key) const;
  [[nodiscard]] Diagnostic at(const YAML::Node& node, std::string field, std::string message) const;

  YAML::Node node_;
  std::string path_;
  std::shared_ptr<const std::string> file_;
  Diagnostics* diags_;
  std::shared_ptr<const OverrideMarks> marks_;
  std::set<std::string, std::less<>> asked_;
  bool valid_map_ = true;
  bool absent_ = false;  // a missing child: its own fields are not reported again
};

// The largest YAML input read: 2 MiB. yaml-cpp holds ~470 bytes per value (a 4 MB list of two
// million numbers took 940 MB before anything checked it, 1.3 GB with the checks); hetsim's
// largest own output, an SPMD plan for 16 384 GPUs, is under 0.5 MB.
inline constexpr size_t kMaxYamlFileBytes = size_t{2} << 20;

// A parsed YAML file. load() throws InputError when the file is missing, over kMaxYamlFileBytes
// or not valid YAML.
class YamlFile {
 public:
  static YamlFile load(const std::filesystem::path& path);
  // The same for a file whose top level is a non-empty list (validation runs).
  static YamlFile load_list(const std::filesystem::path& path);
  // The top-level mapping, reporting into `diags`.
  [[nodiscard]] FieldReader root(Diagnostics& diags) const;
  // The entries of a file read by load_list (paths "[0]", "[1]", ...).
  [[nodiscard]] std::vector<FieldReader> items(Diagnostics& diags) const;
  [[nodiscard]] const std::string& name() const { return *file_; }
  // Edits the parsed tree by `--set` overrides (field_override.hpp) before it is read.
  void apply(const std::vector<FieldOverride>& sets);
  // The parsed tree, for readers that walk it themselves (checked as load() checks it).
  [[nodiscard]] const YAML::Node& tree() const { return root_; }

 private:
  static YamlFile parse(const std::filesystem::path& path);
  YAML::Node root_;
  std::shared_ptr<const std::string> file_;
  std::shared_ptr<const OverrideMarks> marks_;
};

// Whether a diagnostic's message says the file is not well-formed for its format (an unknown or
// missing field, a value of the wrong shape), rather than that its values do not fit this run.
[[nodiscard]] bool is_format_error(std::string_view message);
// Why `v` is not a name shown in summaries (1 to 256 printable characters), or empty when it is one.
[[nodiscard]] std::string name_problem(const std::string& v);

}  // namespace hetsim
