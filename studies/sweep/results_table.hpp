// File: studies/sweep/results_table.hpp
// A sweep's results database as a table (hetsim report): a column per axis of its rows, then the
// figures, what a plan study did with plans, and the change against a baseline row.
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace hetsim {

struct ResultsTableOptions {
  std::string sort;                   // an axis or a figure; empty: database order
  std::vector<std::string> baseline;  // a row number of the table, or AXIS=VALUE conditions naming one row
  bool full = false;                  // figures at full precision (CSV, plots); else rounded for people
};

struct ResultsTable {
  std::vector<std::string> axes;  // the axis columns, in first-seen order
  std::vector<std::string> figures{"iteration_time_s", "samples_per_s", "mfu", "efficiency"};  // sortable, plottable
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;  // cells as text (axis values and errors from inputs: not yet printable())
  size_t scenarios = 0;
  // What the rows cannot say: scenarios whose GPU types ran under different calibration (a profile
  // on some, the raw model on others) compare unlike predictions.
  std::vector<std::string> notes;
};

// Which calibration profile moved each GPU type's times, scenario by scenario (each report's
// `calibration`): where some scenarios' GPU types ran under a profile and others' on the raw model
// (a sweep that swaps the GPU type, or --calibration none in some flags), their rows compare unlike
// predictions, and note() says so.
class CalibrationSpread {
 public:
  void add(size_t row, const nlohmann::json& report);  // `row`: the table's row (1-based)
  // "" where all GPU types ran alike; else the note, naming rows (or counting scenarios).
  [[nodiscard]] std::string note(bool rows) const;

 private:
  std::map<std::string, std::vector<size_t>> calibrated_, raw_;  // "GPU under PROFILE" / "GPU" -> rows
};

// Reads `db` (read-only). Throws InputError for a missing or foreign database, and for a --sort or
// --baseline that names nothing in it.
[[nodiscard]] ResultsTable results_table(const std::filesystem::path& db, const ResultsTableOptions& o);

}  // namespace hetsim
