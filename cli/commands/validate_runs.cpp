// File: cli/commands/validate_runs.cpp
#include "cli/commands/validate_runs.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "base/log.hpp"
#include "base/text.hpp"
#include "cli/common_args.hpp"
#include "cli/input_files.hpp"
#include "cli/output/validation_table.hpp"
#include "studies/validation/calibration.hpp"

namespace hetsim::cli {
namespace {

struct Totals {
  int rows = 0;
  double sum = 0, max = 0;
  void add(double e) {
    ++rows;
    sum += std::fabs(e);
    max = std::max(max, std::fabs(e));
  }
  [[nodiscard]] double mean() const { return rows > 0 ? sum / rows : 0; }
};

}  // namespace

int run_validation_runs(const std::vector<std::string>& files, const std::string& only, const std::string& report,
                        const std::string& markdown_file, const std::string& trace_dir) {
  std::vector<ValidationRun> runs;
  for (ValidationRun& x : load_run_files(files)) {
    if (only.empty() || x.name.find(only) != std::string::npos) runs.push_back(std::move(x));
  }
  if (runs.empty()) throw InputError("--only", "", "\"" + only + "\" matches no run name");
  if (!report.empty()) check_writable(report, "--report");  // before minutes of runs, not after them
  if (!markdown_file.empty()) check_writable(markdown_file, "--markdown");
  if (!trace_dir.empty()) {
    std::error_code ec;
    // The folder itself is made, not the folders above it: a typo'd parent is refused, as --report's is.
    std::filesystem::path folder = std::filesystem::absolute(trace_dir, ec);
    if (!folder.has_filename()) folder = folder.parent_path();  // "traces/"
    const std::filesystem::path parent = folder.parent_path();
    if (!ec && !std::filesystem::is_directory(parent, ec)) {
      throw InputError("--trace-dir", "", "folder " + parent.string() + " does not exist; make it first, or give a folder inside one that does");
    }
    std::filesystem::create_directory(trace_dir, ec);
    if (ec || !std::filesystem::is_directory(trace_dir, ec)) {
      throw InputError("--trace-dir", "", in_quotes(trace_dir) + " cannot be made a directory" + (ec ? ": " + ec.message() : ""));
    }
  }
  const CostModel cost = CostModel::shipped();
  const SimOptions sim;
  std::cout << "hetsim validate: " << runs.size() << " published run" << (runs.size() == 1 ? "" : "s") << " from "
            << files.size() << " file" << (files.size() == 1 ? "" : "s") << "\n\n";
  int w = 3;
  for (const ValidationRun& r : runs) w = std::max(w, static_cast<int>(r.name.size()));
  std::vector<RunResult> results;
  nlohmann::json rows = nlohmann::json::array();
  Totals time, memory;
  int fitted_rows = 0;
  for (size_t i = 0; i < runs.size(); ++i) {
    std::string progress = std::to_string(i + 1);
    progress.append("/").append(std::to_string(runs.size())).append(" ").append(runs[i].name);
    log_info(progress);
    results.push_back(evaluate_run(runs[i], cost, sim, !trace_dir.empty()));
    // The header once the first run is predicted: a run refused at its line (a Megatron grid that
    // breaks a plan rule, which needs its model and cluster) then prints no table before it.
    if (i == 0) std::printf("%-*s %-17s %14s %14s %9s  %s\n", w, "run", "figure", "measured", "predicted", "error", "class");
    RunResult& r = results.back();
    if (!r.trace.is_null()) {
      write_json((std::filesystem::path(trace_dir) / trace_file_name(i, r.run->name)).string(), r.trace, "--trace-dir");
      r.trace = nullptr;  // written: not kept for the whole set
    }
    const std::string cls = r.run->class_name.empty() ? default_class_name(r) : r.run->class_name;
    for (size_t i = 0; i < r.figures.size(); ++i) {
      const FigureResult& f = r.figures[i];
      const std::optional<double> held_out = r.held_out_error(i);
      nlohmann::json row{{"run", r.run->name}, {"figure", f.key},      {"measured", f.measured}, {"class", cls},
                         {"source", r.run->source}, {"scope", r.scope.name()}, {"note", r.note}};
      if (!r.failure.empty()) {
        std::printf("%-*s %-17s %14s %14s %9s  %s\n", w, r.run->name.c_str(), f.key.c_str(),
                    shown(f.key, f.measured).c_str(), "-", "-", std::string("no prediction: ").append(r.failure).c_str());
        row["failure"] = r.failure;
      } else {
        std::printf("%-*s %-17s %14s %14s %9s  %s\n", w, r.run->name.c_str(), f.key.c_str(),
                    shown(f.key, f.measured).c_str(), shown(f.key, f.predicted).c_str(), pct(f.error(), true).c_str(),
                    (cls + (held_out ? " [fitted on by " + r.held_out->by + "; source left out: " + pct(*held_out, true) + "]" : ""))
                        .c_str());
        row["predicted"] = f.predicted;
        row["error"] = f.error();
        if (held_out) {
          row["held_out_error"] = *held_out;
          row["fitted_on_by"] = r.held_out->by;
          ++fitted_rows;
        }
        (quantity_of(f.key) == Quantity::kMemory ? memory : time).add(r.honest_error(i));
      }
      rows.push_back(std::move(row));
    }
  }
  const std::vector<CalibrationClass> classes = calibration_classes(results);
  std::cout << "\ncalibration classes:\n";
  std::printf("  %-44s %-7s %5s %13s %13s %13s\n", "class", "of", "rows", "mean |error|", "p90 |error|", "max |error|");
  for (const CalibrationClass& c : classes) {
    std::printf("  %-44s %-7s %5d %13s %13s %13s\n", c.name.c_str(), std::string(quantity_name(c.quantity)).c_str(), c.rows,
                pct(c.mean_abs_error, false).c_str(), pct(c.p90_abs_error, false).c_str(), pct(c.max_abs_error, false).c_str());
  }
  int failed = 0;
  for (const RunResult& r : results) failed += r.failure.empty() ? 0 : 1;
  std::cout << "\n";
  for (const auto& [what, e] : {std::pair<const char*, const Totals&>{"time:  ", time}, {"memory:", memory}}) {
    if (e.rows == 0) std::cout << what << " no figure of this kind in these runs\n";
    else std::cout << what << " mean |error| " << pct(e.mean(), false) << ", max " << pct(e.max, false) << " over " << e.rows << " figure" << (e.rows == 1 ? "" : "s") << "\n";
  }
  if (failed > 0) std::cout << failed << " run" << (failed == 1 ? "" : "s") << " could not be predicted (see above)\n";
  if (fitted_rows > 0) {
    std::cout << fitted_rows << " figure" << (fitted_rows == 1 ? " is a row" : "s are rows")
              << " a calibration profile in force was fitted on: classes and totals count their error with their source left "
                 "out of the fit (--calibration none shows the raw model)\n";
  }
  if (!markdown_file.empty()) write_file(markdown_file, markdown(results), "--markdown");
  if (!report.empty()) {
    const nlohmann::json j{{"runs", rows},
                           {"classes", to_json(classes)},
                           {"time", {{"rows", time.rows}, {"mean_abs_error", time.mean()}, {"max_abs_error", time.max}}},
                           {"memory", {{"rows", memory.rows}, {"mean_abs_error", memory.mean()}, {"max_abs_error", memory.max}}},
                           {"unpredicted_runs", failed}};
    write_file(report, j.dump(2) + "\n", "--report");
  }
  return 0;
}

}  // namespace hetsim::cli
