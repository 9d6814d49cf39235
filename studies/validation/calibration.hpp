// File: studies/validation/calibration.hpp
// Calibration classes and error bars. Every compared figure of a validation run falls in a class
// (the run's `class`, or "<kind> <GPU types> <scope>") and a quantity (time-like or memory); a class
// states its rows and mean and max |error|. A later prediction is given the error bar of the
// nearest class: the same kind of run, the same GPU types, the same scope, in that order of weight.
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
  bool exact = false;  // the class matches the prediction's kind, GPU types and scope
  [[nodiscard]] std::string text() const;  // "±4.1 % (A100 NVSwitch, 8 calibration rows)"
};
// The nearest class for a prediction of `quantity` by a run of `kind` over `gpus` at `scope`.
[[nodiscard]] std::optional<ErrorBar> nearest_error_bar(const std::vector<CalibrationClass>& classes, Quantity quantity,
                                                        RunKind kind, const std::set<std::string>& gpus,
                                                        const std::string& scope);

}  // namespace hetsim
