// File: base/csv_reader.hpp
// Strict reading of CSV inputs (measured tables, profiles): a required header, '#' comment lines,
// optionally double-quoted fields, and problems reported as file:line:col: error: column: message.
#pragma once

#include <filesystem>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "base/input_error.hpp"

namespace hetsim {

class CsvRow {
 public:
  CsvRow(const std::string* file, int line, const std::vector<std::string>* columns,
         std::vector<std::pair<std::string, int>> fields, Diagnostics* diags)
      : file_(file), line_(line), columns_(columns), fields_(std::move(fields)), diags_(diags) {}

  [[nodiscard]] const std::string& text(size_t column) const { return fields_[column].first; }
  [[nodiscard]] bool has(size_t column) const { return column < fields_.size(); }
  // A required non-empty text; reports "missing value" (with `what`, if given) when empty.
  [[nodiscard]] const std::string& required(size_t column, const std::string& what = "") const;
  // A finite number in [min, max]; nullopt (after a diagnostic when `required`) when empty or invalid.
  [[nodiscard]] std::optional<double> number(size_t column, double min, bool required = true,
                                             double max = std::numeric_limits<double>::max()) const;
  // A whole number in [min, max] (a shape, a count): 1e30 or 2.5 is an error, never a cast.
  [[nodiscard]] std::optional<long> integer(size_t column, long min, long max, bool required = true) const;
  // A time in seconds, from a nanosecond to an hour (one kernel's or layer's time).
  [[nodiscard]] std::optional<double> seconds(size_t column, bool required = true) const;
  // An SM clock in MHz in an optional column: 0 where the column is absent or the field empty or 0
  // (not known), else from 100 MHz up to the GPU's maximum in column `max_column` (clock_mhz), which
  // must then be stated; nullopt after a diagnostic.
  [[nodiscard]] std::optional<double> sm_clock(size_t column, size_t max_column) const;
  // A required date (base/iso_date.hpp: ISO 8601, 2000 to 2100); `what` as for required().
  [[nodiscard]] std::optional<std::string> date(size_t column, const std::string& what) const;
  void error(size_t column, std::string message) const;
  [[nodiscard]] int line() const { return line_; }

 private:
  const std::string* file_;
  int line_;
  const std::vector<std::string>* columns_;
  std::vector<std::pair<std::string, int>> fields_;  // text and 1-based column
  Diagnostics* diags_;
};

// Reads `file` whose header must be exactly `columns`, followed by any leading part of `optional`
// (trailing columns a format added later: older files lack them); calls `on_row` for every data
// row with as many fields as the header (row.has(c) says whether optional column c is there).
// Throws InputError with every problem found (including those the callback reports through the row).
void read_csv(const std::filesystem::path& file, const std::vector<std::string>& columns,
              const std::function<void(const CsvRow&)>& on_row, const std::vector<std::string>& optional = {});

}  // namespace hetsim
