// File: base/csv_reader.cpp
#include "base/csv_reader.hpp"

#include <charconv>
#include <cmath>
#include <fstream>

#include "base/data_dir.hpp"
#include "base/iso_date.hpp"
#include "base/text.hpp"

namespace hetsim {

namespace {

// Splits one line; fields may be double-quoted, a quote inside doubled (RFC 4180). Each field
// keeps its 1-based column. A quoted field the line does not close sets *unclosed to its column
// (a field is one line: a quote left open took the rest of the line as text).
std::vector<std::pair<std::string, int>> split(const std::string& line, int* unclosed) {
  std::vector<std::pair<std::string, int>> out;
  size_t i = 0;
  *unclosed = 0;
  while (true) {
    const int col = static_cast<int>(i) + 1;
    std::string field;
    if (i < line.size() && line[i] == '"') {
      bool closed = false;
      for (++i; i < line.size(); ++i) {
        if (line[i] != '"') {
          field += line[i];
        } else if (i + 1 < line.size() && line[i + 1] == '"') {
          field += line[++i];
        } else {
          ++i;
          closed = true;
          break;
        }
      }
      if (!closed && *unclosed == 0) *unclosed = col;
      while (i < line.size() && line[i] != ',') field += line[i++];  // text after the closing quote
    } else {
      while (i < line.size() && line[i] != ',') field += line[i++];
    }
    out.push_back({field, col});
    if (i >= line.size() || line[i] != ',') break;
    ++i;
  }
  return out;
}

}  // namespace

void CsvRow::error(size_t column, std::string message) const {
  diags_->add({*file_, line_, fields_[column].second, (*columns_)[column], std::move(message)});
}

const std::string& CsvRow::required(size_t column, const std::string& what) const {
  if (fields_[column].first.empty()) error(column, "missing value" + (what.empty() ? "" : ": " + what));
  return fields_[column].first;
}

std::optional<double> CsvRow::number(size_t column, double min, bool required, double max) const {
  const std::string& f = fields_[column].first;
  if (f.empty()) {
    if (required) error(column, "missing value");
    return std::nullopt;
  }
  double v = 0;
  auto [p, ec] = std::from_chars(f.data(), f.data() + f.size(), v);
  if (ec != std::errc() || p != f.data() + f.size() || !std::isfinite(v)) {
    error(column, in_quotes(f) + " is not a number");
    return std::nullopt;
  }
  if (v < min) {
    error(column, f + " is out of range; expected at least " + (min == std::floor(min) ? std::to_string(static_cast<long>(min)) : std::to_string(min)));
    return std::nullopt;
  }
  if (v > max) {
    error(column, f + " is out of range; expected at most " + format_double(max == std::floor(max) && max < 1e15 ? "%.0f" : "%g", max));
    return std::nullopt;
  }
  return v;
}

std::optional<long> CsvRow::integer(size_t column, long min, long max, bool required) const {
  const std::optional<double> v = number(column, static_cast<double>(min), required, static_cast<double>(max));
  if (!v) return std::nullopt;
  if (*v != std::floor(*v)) {
    error(column, fields_[column].first + " is not a whole number");
    return std::nullopt;
  }
  return static_cast<long>(*v);
}

std::optional<double> CsvRow::sm_clock(size_t column, size_t max_column) const {
  if (!has(column)) return 0.0;
  const std::optional<double> v = number(column, 0, false);
  if (!v) return fields_[column].first.empty() ? std::optional<double>(0.0) : std::nullopt;
  if (*v == 0) return 0.0;
  const std::string& f = fields_[column].first;
  if (*v < 100) {
    error(column, f + " MHz is below any GPU's compute clock (0 says it is not known)");
    return std::nullopt;
  }
  // The maximum, read quietly: its own column reports its own problems.
  const std::string& m = fields_[max_column].first;
  double most = 0;
  const auto [p, ec] = std::from_chars(m.data(), m.data() + m.size(), most);
  if (ec != std::errc() || p != m.data() + m.size() || !std::isfinite(most) || most <= 0) {
    error(column, f + " MHz cannot be checked: the row states no clock_mhz, the GPU's maximum");
    return std::nullopt;
  }
  if (*v > most) {
    error(column, f + " MHz is above the GPU's maximum, clock_mhz " + m);
    return std::nullopt;
  }
  return v;
}

std::optional<double> CsvRow::seconds(size_t column, bool required) const {
  const std::optional<double> v = number(column, std::numeric_limits<double>::lowest(), required, 3600);
  if (v && *v <= 0) {
    error(column, fields_[column].first + " must be greater than zero");
    return std::nullopt;
  }
  // No measured GPU kernel or layer takes less than a nanosecond (a launch alone takes microseconds).
  if (v && *v < 1e-9) {
    error(column, fields_[column].first + " s is below a nanosecond, shorter than any measured kernel");
    return std::nullopt;
  }
  return v;
}

std::optional<std::string> CsvRow::date(size_t column, const std::string& what) const {
  const std::string& text = required(column, what);
  if (text.empty()) return std::nullopt;
  if (std::string why = iso_date_problem(text); !why.empty()) {
    error(column, in_quotes(text) + why);
    return std::nullopt;
  }
  return text;
}

void read_csv(const std::filesystem::path& path, const std::vector<std::string>& required,
              const std::function<void(const CsvRow&)>& on_row, const std::vector<std::string>& optional) {
  const std::string file = path.string();
  check_input_file(path);
  std::ifstream in(path);
  if (!in) throw InputError(file, "", "cannot open file");
  Diagnostics diags;
  std::string line;
  int line_no = 0;
  long rows = 0;
  int header_line = 0;
  bool header = false;
  std::vector<std::string> columns = required;  // the header's, once read
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line_no == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);  // a UTF-8 byte-order mark
    if (line.empty() || line[0] == '#') continue;
    int unclosed = 0;
    std::vector<std::pair<std::string, int>> fields = split(line, &unclosed);
    if (unclosed > 0) {
      diags.add({file, line_no, unclosed, "", "a quoted field is not closed on its line: end it with \", or double each \" inside it"});
      if (!header) break;  // a header that does not parse names no column
      continue;
    }
    if (!header) {
      header = true;
      header_line = line_no;
      std::vector<std::string> names;
      for (const auto& [f, col] : fields) names.push_back(f);
      columns = required;
      for (size_t i = 0; i < optional.size() && names.size() > columns.size(); ++i) columns.push_back(optional[i]);
      if (names != columns) {
        std::string want = "expected the columns " + join(required);
        if (!optional.empty()) want += ", then optionally " + join(optional) + " (in that order)";
        diags.add({file, line_no, 1, "header", want});
        break;
      }
      continue;
    }
    if (fields.size() != columns.size()) {
      diags.add({file, line_no, 1, "", "expected " + std::to_string(columns.size()) + " columns, found " + std::to_string(fields.size())});
      continue;
    }
    on_row(CsvRow(&file, line_no, &columns, std::move(fields), &diags));
    ++rows;
  }
  if (!header && diags.empty()) diags.add({file, 1, 1, "", "no header line"});
  if (header && rows == 0 && diags.empty()) diags.add({file, header_line, 1, "", "a header but no rows: the file measures nothing"});
  diags.throw_if_any();
}

}  // namespace hetsim
