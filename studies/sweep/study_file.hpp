// File: studies/sweep/study_file.hpp
// A study (docs/formats/study.md): one cluster and model, a run kind, and the axes whose
// cartesian product are its scenarios. Each scenario is a list of --set edits and planner flags.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/input_error.hpp"

namespace hetsim {

// One axis: a field path with its values (`set`), or alternative sets of planner flags (`flags`).
struct StudyAxis {
  std::string path;                             // "cluster.node_types[*].nic.bandwidth"; empty for flags
  std::vector<std::string> values;              // YAML text of each value
  std::vector<std::vector<std::string>> flags;  // each alternative's command-line flags
  std::vector<std::string> names;               // each alternative's name where values or flags is a
                                                // mapping of names to them (tables and plots show it); else empty
  int line = 0, column = 0;                     // of `set` or `flags` in the study file (1-based; 0: unknown)
  [[nodiscard]] bool is_flags() const { return path.empty(); }
  [[nodiscard]] size_t size() const { return is_flags() ? flags.size() : values.size(); }
};

struct Study {
  std::string file;
  std::string name;
  std::string cluster;   // a path or a shipped name
  std::string model;
  Diagnostic cluster_where{}, model_where{};  // file:line of `cluster` and `model`, for messages found later
  std::string run = "plan";  // plan | simulate
  std::string strategy;      // simulate: a strategy, or
  std::string plan;          // a plan file (resolved against the study's folder)
  // run: plan. true: the baseline's plan (the study's cluster and model as written, planned once)
  // is simulated on every scenario, never re-planned: what the hardware alone is worth. false (the
  // default): each scenario is re-planned, with the baseline's plan kept among its candidates
  // (plan --keep-plan; not in scenarios with planner flags, whose point is the search).
  bool hold_plan = false;
  std::vector<StudyAxis> axes;
  // What the sweep says before it runs: how axes that edit one node type combine.
  std::vector<std::string> notes;
};

// One point of the product: the command-line arguments that make it, and its axis values.
struct Scenario {
  size_t index = 0;                // position in the product (first axis slowest)
  std::vector<std::string> sets;   // "PATH=VALUE"
  std::vector<std::string> flags;
  nlohmann::json axes;             // {"<path>": value, "flags": "--no-lp"}
};

// Reads and checks a study file; throws InputError naming file, line and field. A field varied by
// two axes, a second flags axis, or one value listed twice in an axis is an error (the later
// --set silently won; two flags axes wrote one column), and so is a value that makes a --set over
// kMaxSetBytes (base/field_override.hpp). The exception: one axis replacing a node
// type whole (cluster.node_types[K]) and one editing a field of every node type
// (cluster.node_types[*].FIELD); each scenario applies them in axis order, and `notes` says what
// that means.
[[nodiscard]] Study load_study(const std::filesystem::path& path);
// How many scenarios the study has (the product of its axes' sizes; one without axes), and the
// one at `index` (0 to count - 1; the first axis varies slowest). Scenarios are made one at a
// time, when needed: a study of a million holds its axes, not a million lists of edits.
[[nodiscard]] size_t scenario_count(const Study& study);
[[nodiscard]] Scenario scenario_at(const Study& study, size_t index);
// The arguments of `hetsim plan|simulate` for a scenario (without --report). `baseline_plan`: the
// baseline's plan file (run: plan), simulated held (hold_plan) or kept among the candidates.
[[nodiscard]] std::vector<std::string> scenario_args(const Study& study, const Scenario& s, const std::string& baseline_plan = "");
// What a study does with plans across its scenarios, as the sweep says it before it runs.
[[nodiscard]] std::string plans_policy(const Study& study);

}  // namespace hetsim
