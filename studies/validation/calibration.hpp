// File: studies/validation/calibration.hpp
// Calibration classes and error bars. Every compared figure of a validation run falls in a class
// (the run's `class`, or "<kind> <GPU types> <scope>") and a quantity (time-like or memory); a class
// states its rows, mean, max and 90th-percentile |error|. A later prediction is given the 90th
// percentile of a class of the same quantity and kind of run whose GPU types include all of the
// prediction's (mixture of experts or not, then GEMM precision, then scope, then rows decide); none:
// no error bar, and the prediction says it has no calibration rather than borrowing another GPU's
// (nor a time bar of the other kind of model: MoE or dense).
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "studies/validation/run_evaluation.hpp"

namespace hetsim {

enum class Quantity { kTime, kMemory };
[[nodiscard]] std::string_view quantity_name(Quantity q);  // "time", "memory"
[[nodiscard]] Quantity quantity_of(const std::string& figure_key);

struct CalibrationClass {
  std::string name;
  Quantity quantity = Quantity::kTime;
  RunKind kind = RunKind::kTraining;
  std::set<std::string> gpus;
  std::string scope;  // RunScope::name() of its runs; "mixed" when they differ
  int rows = 0;       // compared figures
  double mean_abs_error = 0;
  double max_abs_error = 0;
  // The 90th percentile of its rows' |error| (nearest rank: the max below 10 rows): the error bar.
  // Each row's error is out of sample: a row a calibration profile in force was fitted on counts
  // with its error when its source was left out of the fit (RunResult::honest_error).
  double p90_abs_error = 0;
  bool moe = false;                  // its training runs are of mixture-of-experts models
  bool low_precision_gemms = false;  // ... with GEMMs in a low-precision recipe
  bool fp32_gemms = false;           // ... with GEMMs in fp32 (SIMT kernels, not tensor cores)
  bool mamba = false;                // ... of hybrid models with Mamba layers: no prediction borrows its bar
  std::set<std::string> scopes{};    // every RunScope::name() of its runs (empty: `scope` alone)
  std::set<std::string> profiles{};  // the calibration profiles its runs were predicted with (empty: unknown)
  std::set<std::string> gemm_formats{};  // its training runs' GEMM formats ("fp16", "tf32", "mxfp8"; empty: unknown)
  // GPU types of `gpus` it covers through a sibling's rows, not rows of their own (error_bars.cpp);
  // of two classes equally near, the one with rows of the prediction's own GPU types is nearer.
  std::set<std::string> borrowed{};
  [[nodiscard]] bool has_scope(const std::string& s) const { return scopes.empty() ? scope == s : scopes.contains(s); }
};

// The class a run's figures belong to when the run names none.
[[nodiscard]] std::string default_class_name(const RunResult& r);

// Classes of every compared figure (runs that failed to predict are left out), sorted by name and
// quantity.
[[nodiscard]] std::vector<CalibrationClass> calibration_classes(const std::vector<RunResult>& results);

[[nodiscard]] nlohmann::json to_json(const std::vector<CalibrationClass>& classes);
// Reads the `classes` of a `hetsim validate --report` file. Throws InputError naming the file.
[[nodiscard]] std::vector<CalibrationClass> load_calibration(const std::filesystem::path& report);
// studies/validation/calibration.json under the data root: the shipped calibration's classes
// (none when the file is absent).
[[nodiscard]] std::vector<CalibrationClass> shipped_calibration();

struct ErrorBar {
  CalibrationClass of;
  bool exact = false;  // the class covers the prediction's GPU types and matches its scope, MoE or dense, GEMM precision and profiles
  bool other_stack = false;  // all of that but the calibration profiles: its rows ran another software stack
  // Where the class speaks for a GPU type through a sibling's rows (same chip, another memory; the
  // profile in force on it was fitted on those rows): "GPU-A for GPU-B", said in the text.
  std::string sibling{};
  // "±4.1 % (90th percentile of |error| over 8 calibration rows: A100 NVSwitch)"
  [[nodiscard]] std::string text() const;
};
// The class for a prediction of `quantity` by a run of `kind` over `gpus` at `scope` (`moe`: of a
// mixture-of-experts model; `low_precision`: GEMMs in fp8, mxfp8 or nvfp4; `fp32`: GEMMs in fp32;
// `profiles`: the calibration profiles in force, empty when unknown; `gemm_format`: "bf16", "tf32",
// ..., empty when unknown); nullopt when no class of that quantity and kind covers every GPU type.
// Of those, the one of the same setting first (MoE or dense, then the GEMM recipe, fp32 or tensor
// cores, then the format itself: fp16 rows before TF32 rows for an fp16 prediction), then of the
// same profiles (rows of the same software stack), then of the same scope, then the one with more
// rows, then the wider bar. A time bar is never one of the other kind of model (MoE or dense):
// nullopt then. Hybrid models (`mamba`: Mamba layers) take only hybrid classes, and theirs speak
// for no other model.
[[nodiscard]] std::optional<ErrorBar> nearest_error_bar(const std::vector<CalibrationClass>& classes, Quantity quantity,
                                                        RunKind kind, const std::set<std::string>& gpus,
                                                        const std::string& scope, bool moe = false, bool low_precision = false,
                                                        bool fp32 = false, const std::set<std::string>& profiles = {},
                                                        const std::string& gemm_format = "", bool mamba = false);

// What a prediction with no bar says: "no calibration for this GPU and setting (...)" where classes
// of these GPU types exist for the other kind of model only (MoE or dense), naming the largest;
// else "no calibration for these GPU types in training runs".
[[nodiscard]] std::string missing_error_bar_text(const std::vector<CalibrationClass>& classes, Quantity quantity, RunKind kind,
                                                 const std::set<std::string>& gpus, bool moe);

}  // namespace hetsim
