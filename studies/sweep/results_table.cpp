// File: studies/sweep/results_table.cpp
#include "studies/sweep/results_table.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

#include <nlohmann/json.hpp>

#include "base/input_error.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "studies/sweep/results_db.hpp"

namespace hetsim {
namespace {

std::string axis_text(const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

// What a plan study's scenario did with plans (its report's `plans`, written by the sweep): held
// (the baseline's plan on every scenario), or re-planned with the baseline's plan kept among the
// candidates, and then that plan's samples/s where the search found a faster one. Empty cells for
// rows of other studies.
struct PlanCells {
  std::string plans, baseline_plan;
};
PlanCells plan_cells(const ScenarioRow& r, const nlohmann::json& j, bool full) {
  if (!j.is_object() || !j.contains("plans") || !j["plans"].is_string()) return {};
  PlanCells c{j["plans"].get<std::string>(), ""};
  if (!j.contains("kept_plan") || !j["kept_plan"].is_object()) return c;
  const nlohmann::json& k = j["kept_plan"];
  if (!k.value("applies", false)) {
    c.baseline_plan = "does not apply";
  } else if (k.value("chosen", false)) {
    c.baseline_plan = "chosen";
  } else if (k.value("iteration_time_s", 0.0) <= r.iteration_time_s) {
    c.baseline_plan = "as fast";
  } else {
    c.baseline_plan = format_double(full ? "%.17g" : "%.4g", k.value("samples_per_s", 0.0));
  }
  return c;
}

// A flags alternative written as the study writes it, "[--no-lp, --no-zero1]" or "[]", as its cell
// shows it ("--no-lp --no-zero1", ""); other text as it is.
std::string flags_text(const std::string& value) {
  if (value.size() < 2 || value.front() != '[' || value.back() != ']') return value;
  std::string out, flag;
  auto add = [&] {
    const size_t from = flag.find_first_not_of(" \t\"'"), to = flag.find_last_not_of(" \t\"'");
    if (from != std::string::npos) out.append(out.empty() ? "" : " ").append(flag.substr(from, to - from + 1));
    flag.clear();
  };
  for (const char c : value.substr(1, value.size() - 2)) {
    if (c == ',') add();
    else flag += c;
  }
  add();
  return out;
}

// The row --baseline names (an index into `rows`), or -1 without --baseline. A number is a row of
// the printed table (1 = the first); AXIS=VALUE conditions must all hold for exactly one row.
long baseline_row(const std::vector<std::string>& spec, const std::vector<ScenarioRow>& rows,
                  const std::vector<nlohmann::json>& parsed, const std::vector<size_t>& order) {
  if (spec.empty()) return -1;
  if (spec.size() == 1 && !spec[0].empty() && std::all_of(spec[0].begin(), spec[0].end(), ::isdigit)) {
    const long n = spec[0].size() > 9 ? 0 : std::stol(spec[0]);
    if (n < 1 || n > static_cast<long>(order.size())) {
      throw InputError("--baseline", "", "row " + spec[0] + " is not in the table (rows 1 to " + std::to_string(order.size()) + ")");
    }
    return static_cast<long>(order[static_cast<size_t>(n - 1)]);
  }
  for (const std::string& cond : spec) {
    if (!cond.empty() && std::all_of(cond.begin(), cond.end(), ::isdigit)) {
      throw InputError("--baseline", "", "row " + cond + " is given with another --baseline: a row number names one row by itself; "
                                         "repeat --baseline only for AXIS=VALUE conditions that together name one row");
    }
  }
  std::vector<long> matches;
  for (size_t i = 0; i < rows.size(); ++i) {
    bool all = true;
    for (const std::string& cond : spec) {
      const size_t eq = cond.find('=');
      if (eq == std::string::npos) throw InputError("--baseline", "", in_quotes(cond) + " is neither a row number nor AXIS=VALUE");
      const std::string axis = cond.substr(0, eq), value = cond.substr(eq + 1);
      all = all && parsed[i].contains(axis) && (axis_text(parsed[i][axis]) == value || axis_text(parsed[i][axis]) == flags_text(value));
    }
    if (all) matches.push_back(static_cast<long>(i));
  }
  if (matches.size() != 1) {
    throw InputError("--baseline", "", join(spec) + (matches.empty() ? " names no row" : " names " + std::to_string(matches.size()) + " rows") +
                                           " of this study (hetsim report without --baseline shows each row's axis values)");
  }
  return matches.front();
}

// "1-3, 5": table rows (1-based, ascending); past eight ranges "..." and how many rows (a GPU axis
// varied fastest alternates the rows of a study of a million).
std::string row_list(const std::vector<size_t>& rows) {
  std::string s;
  size_t ranges = 0;
  for (size_t i = 0; i < rows.size();) {
    if (++ranges > 8) return s + ", ... (" + std::to_string(rows.size()) + " rows)";
    size_t j = i;
    while (j + 1 < rows.size() && rows[j + 1] == rows[j] + 1) ++j;
    if (!s.empty()) s.append(", ");
    s.append(std::to_string(rows[i]));
    if (j > i) s.append("-").append(std::to_string(rows[j]));
    i = j + 1;
  }
  return s;
}

}  // namespace

void CalibrationSpread::add(size_t row, const nlohmann::json& report) {
  if (!report.is_object() || !report.contains("calibration") || !report["calibration"].is_object()) return;
  for (const auto& [gpu, profile] : report["calibration"].items()) {
    if (!profile.is_string()) continue;
    const std::string name = profile.get<std::string>();
    (name == "none" ? raw_[gpu] : calibrated_[gpu + " under " + name]).push_back(row);
  }
}

std::string CalibrationSpread::note(bool rows) const {
  if (calibrated_.empty() || raw_.empty()) return "";
  const auto list = [rows](const std::map<std::string, std::vector<size_t>>& m, const std::string& tail) {
    std::vector<std::string> out;
    for (auto [what, at] : m) {
      std::sort(at.begin(), at.end());  // a sorted table's rows arrive in the database's order
      out.push_back(what + tail + " (" + (rows ? std::string(at.size() == 1 ? "row " : "rows ") + row_list(at) : counted(at.size(), "scenario")) + ")");
    }
    return join(out);
  };
  return "calibration differs across these scenarios: " + list(calibrated_, "") + "; " + list(raw_, " on the raw model") +
         ". The raw model ran faster than measured wherever a profile was fitted, so a raw GPU reads optimistic beside a "
         "calibrated one: compare like with like (--calibration none in every scenario's flags, or a profile for each: hetsim "
         "calibrate)";
}

ResultsTable results_table(const std::filesystem::path& file, const ResultsTableOptions& o) {
  ResultsTable out;
  std::error_code ec;
  if (std::filesystem::is_directory(file, ec)) {
    throw InputError(file.string(), "", "is a directory; expected a results database file (hetsim sweep writes one: --db, or by default the study file with .db)");
  }
  if (!std::filesystem::is_regular_file(file, ec)) {
    throw InputError(file.string(), "", std::filesystem::exists(file, ec) ? "is not a results database: not a regular file (hetsim sweep writes one)"
                                                                           : "no such results database (hetsim sweep writes one)");
  }
  const ResultsDb db(file, ResultsDb::Mode::kRead);
  std::vector<ScenarioRow> rows = db.rows();
  // Axis columns: every axis of every row, in first-seen order.
  std::vector<std::string>& axes = out.axes;
  std::vector<nlohmann::json> parsed;
  for (const ScenarioRow& r : rows) {
    parsed.push_back(nlohmann::json::parse(r.axes, nullptr, false));
    if (!parsed.back().is_object()) parsed.back() = nlohmann::json::object();
    for (auto it = parsed.back().begin(); it != parsed.back().end(); ++it) {
      if (std::find(axes.begin(), axes.end(), it.key()) == axes.end()) axes.push_back(it.key());
    }
  }
  const std::vector<std::string>& figures = out.figures;
  std::vector<size_t> order(rows.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  if (!o.sort.empty()) {
    const bool is_axis = std::find(axes.begin(), axes.end(), o.sort) != axes.end();
    const bool is_figure = std::find(figures.begin(), figures.end(), o.sort) != figures.end();
    if (!is_axis && !is_figure) {
      std::vector<std::string> all = axes;
      all.insert(all.end(), figures.begin(), figures.end());
      throw InputError("--sort", "", in_quotes(o.sort) + " is neither an axis nor a figure of this study" + did_you_mean(o.sort, all));
    }
    auto figure = [&](size_t i) {
      const ScenarioRow& r = rows[i];
      if (r.status != "ok") return 1e300;
      return o.sort == "iteration_time_s" ? r.iteration_time_s : o.sort == "samples_per_s" ? r.samples_per_s : o.sort == "mfu" ? r.mfu : r.efficiency;
    };
    std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
      if (is_figure) return figure(x) < figure(y);
      return axis_text(parsed[x].value(o.sort, nlohmann::json())) < axis_text(parsed[y].value(o.sort, nlohmann::json()));
    });
  }
  const long base = baseline_row(o.baseline, rows, parsed, order);
  const bool full = o.full;
  std::vector<size_t> table_row(rows.size());  // each row's line in the table (1-based)
  for (size_t k = 0; k < order.size(); ++k) table_row[order[k]] = k + 1;
  // Each report read once, for what the study did with plans and for the calibration in force.
  std::vector<PlanCells> plans;
  bool plan_study = false;
  CalibrationSpread spread;
  std::vector<size_t> above_published;  // table rows whose MFU is above the published figure
  for (size_t i = 0; i < rows.size(); ++i) {
    const nlohmann::json report = nlohmann::json::parse(rows[i].report, nullptr, false);
    if (rows[i].status == "ok" && !rows[i].report.empty() && !report.is_object()) {  // a hand's edit, said
      throw InputError(file.string(), "", "scenario " + printable(rows[i].scenario.substr(0, 32)) +
                                              "'s report is not a JSON object (the database was edited by hand or damaged); " +
                                              kRestoreResults);
    }
    plans.push_back(plan_cells(rows[i], report, full));
    plan_study = plan_study || !plans.back().plans.empty();
    if (rows[i].status == "ok") spread.add(table_row[i], report);
    const nlohmann::json published = report.is_object() ? report.value("mfu_published", nlohmann::json()) : nlohmann::json();
    if (rows[i].status == "ok" && published.is_object() && published.value("above", false) == true) above_published.push_back(table_row[i]);
  }
  if (!above_published.empty()) {  // as plan and simulate say it beside the figure, said of the table's rows
    std::sort(above_published.begin(), above_published.end());
    out.notes.push_back("MFU above the highest published for its GPUs and setting in rows " + row_list(above_published) +
                        " (each row's report names the figure: mfu_published): nothing published on those GPUs has run that "
                        "fast, so those predictions are more likely optimistic than the hardware faster");
  }
  std::vector<std::string>& header = out.header;
  header = {"study"};
  header.insert(header.end(), axes.begin(), axes.end());
  for (const char* h : {"status", "iteration_time_s", "samples_per_s", "mfu", "efficiency", full ? "peak_memory_bytes" : "peak_memory",
                        "wall_s", "error"}) {
    header.push_back(h);
  }
  std::vector<std::vector<std::string>>& table = out.rows;
  for (size_t i : order) {
    const ScenarioRow& r = rows[i];
    std::vector<std::string> cells{r.study};
    for (const std::string& ax : axes) cells.push_back(parsed[i].contains(ax) ? axis_text(parsed[i][ax]) : "");
    cells.push_back(r.status);
    const bool ok = r.status == "ok";
    const char* f = full ? "%.17g" : "%.4g";
    cells.push_back(ok ? format_double(f, r.iteration_time_s) : "");
    cells.push_back(ok ? format_double(f, r.samples_per_s) : "");
    cells.push_back(ok ? format_double(full ? f : "%.1f%%", full ? r.mfu : 100 * r.mfu) : "");
    cells.push_back(ok && r.efficiency > 0 ? format_double(full ? f : "%.1f%%", full ? r.efficiency : 100 * r.efficiency) : "");
    cells.push_back(ok ? (full ? format_double("%.17g", r.peak_memory_bytes) : format_bytes(r.peak_memory_bytes)) : "");
    cells.push_back(format_double(full ? "%.6g" : "%.2f", r.wall_s));
    std::string err = r.error;
    if (!full && err.size() > 80) err = err.substr(0, 77) + "...";
    std::replace(err.begin(), err.end(), '\n', ' ');
    cells.push_back(err);
    if (plan_study) {
      cells.push_back(plans[i].plans);
      cells.push_back(ok ? plans[i].baseline_plan : "");
    }
    if (base >= 0) {
      const ScenarioRow& b = rows[static_cast<size_t>(base)];
      const double change = ok && b.samples_per_s > 0 ? r.samples_per_s / b.samples_per_s - 1 : 0;
      // (A baseline of almost no throughput, as only a hand's edit leaves, gives no finite change.)
      cells.push_back(!ok || b.samples_per_s <= 0 || !std::isfinite(change) ? ""
                      : full                                                ? format_double(f, change)
                                                                            : format_double("%+.1f%%", 100 * change));
    }
    table.push_back(std::move(cells));
  }
  if (plan_study) header.insert(header.end(), {"plans", "baseline_plan_samples_per_s"});
  if (base >= 0) header.push_back("samples_per_s_vs_baseline");
  if (std::string note = spread.note(true); !note.empty()) out.notes.push_back(std::move(note));
  out.scenarios = rows.size();
  return out;
}

}  // namespace hetsim
