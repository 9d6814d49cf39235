// File: planner/hybrid/hybrid_plan_file.hpp
// Reading and writing `kind: hybrid` plan files (docs/formats/hybrid-plan.md). The reader checks
// every rule (check_hybrid_plan) and reports each problem at the file:line:col of the field it is
// about; the writer emits doubles with 17 significant digits so a plan read back simulates to the
// same time.
#pragma once

#include <filesystem>
#include <string>

#include "base/yaml_reader.hpp"
#include "planner/hybrid/hybrid_plan.hpp"

namespace hetsim {

// The `kind` of a plan file ("spmd" when absent, as plans written before hybrid plans existed).
// Throws InputError when the file cannot be read or is not YAML.
[[nodiscard]] std::string plan_file_kind(const std::filesystem::path& path);

// Reads a hybrid plan for `model` on `cluster`. Throws InputError listing every problem.
[[nodiscard]] HybridPlan load_hybrid_plan(const std::filesystem::path& path, const ModelSpec& model,
                                          const Cluster& cluster);

// The optional fields `recompute` (none, selective, full; `absent` where missing) and
// `recompute_modules` (a list of Megatron-Core's module names, selective only; implies selective
// where `recompute` is missing) of a plan file or a run file's megatron block.
// And `recompute_layers` (full only): the first layers of each model chunk recomputed, 0 for all.
struct RecomputeChoice {
  RecomputeMode mode = RecomputeMode::kNone;
  RecomputeModules modules = kDefaultRecomputeModules;
  int layers = 0;
};
[[nodiscard]] RecomputeChoice read_recompute(FieldReader& r, RecomputeMode absent);
// The optional field `activation_offload_layers` (HybridPlan::activation_offload_layers) of a plan file or a
// run file's megatron block, beside `recompute`'s choice: 0 where missing; refused beside recompute.
[[nodiscard]] int read_activation_offload(FieldReader& r, const RecomputeChoice& recompute);

// With `cluster`, each stage also names the node types of its devices (`node_type`), which a reader
// checks against its own cluster's: a renumbering of the GPUs is refused, a GPU swap is not.
[[nodiscard]] std::string hybrid_plan_to_yaml(const HybridPlan& plan, const Cluster* cluster = nullptr);

}  // namespace hetsim
