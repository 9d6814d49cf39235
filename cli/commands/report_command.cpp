// File: cli/commands/report_command.cpp
#include "cli/commands/report_command.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include <nlohmann/json.hpp>

#include "base/data_dir.hpp"
#include "base/input_error.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "cli/common_args.hpp"
#include "cli/output/python_plot.hpp"
#include "studies/sweep/results_db.hpp"

namespace hetsim::cli {
namespace {

std::string axis_text(const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

std::string csv_line(const std::vector<std::string>& cells) {
  std::string s;
  for (size_t c = 0; c < cells.size(); ++c) s += (c ? "," : "") + csv_field(cells[c]);
  return s + "\n";
}

// Runs studies/sweep/plot_report.py on the table (written as CSV to a temporary file).
int plot(const ReportArgs& a, const std::vector<std::string>& axes, const std::vector<std::string>& figures,
         const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& table) {
  if (axes.empty()) throw InputError("--plot", "", "this study has no axis to plot against");
  const std::string x = a.x.empty() ? axes.front() : a.x;
  std::string lines = a.lines;
  if (a.lines.empty() && axes.size() > 1) lines = axes[0] == x ? axes[1] : axes[0];
  const std::string y = a.y.empty() ? "samples_per_s" : a.y;
  for (const auto& [flag, name] : {std::pair<const char*, std::string>{"--x", x}, {"--lines", lines}}) {
    if (!name.empty() && std::find(axes.begin(), axes.end(), name) == axes.end()) {
      throw InputError(flag, "", in_quotes(name) + " is not an axis of this study" + did_you_mean(name, axes));
    }
  }
  if (std::find(figures.begin(), figures.end(), y) == figures.end()) {
    throw InputError("--y", "", in_quotes(y) + " is not one of: " + join(figures) + did_you_mean(y, figures));
  }
  std::string text = csv_line(header);
  for (const auto& row : table) text += csv_line(row);
  std::vector<std::string> args{"--x", x, "--y", y};
  if (!lines.empty()) args.insert(args.end(), {"--lines", lines});
  args.insert(args.end(), {"--title", std::filesystem::path(a.db).filename().string()});
  const int rc = run_plot_script("studies/sweep/plot_report.py", text, a.plot, args, "hetsim report --plot",
                                 "the table itself (hetsim report " + a.db + ")");
  if (rc == 0) std::cout << "wrote " << a.plot << ": " << y << " against " << x << (lines.empty() ? "" : ", one line per " + lines) << "\n";
  return rc;
}

// What a plan study's scenario did with plans (its report's `plans`, written by the sweep): held
// (the baseline's plan on every scenario), or re-planned with the baseline's plan kept among the
// candidates, and then that plan's samples/s where the search found a faster one. Empty cells for
// rows of other studies.
struct PlanCells {
  std::string plans, baseline_plan;
};
PlanCells plan_cells(const ScenarioRow& r, bool full) {
  const nlohmann::json j = nlohmann::json::parse(r.report, nullptr, false);
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
  std::vector<long> matches;
  for (size_t i = 0; i < rows.size(); ++i) {
    bool all = true;
    for (const std::string& cond : spec) {
      const size_t eq = cond.find('=');
      if (eq == std::string::npos) throw InputError("--baseline", "", in_quotes(cond) + " is neither a row number nor AXIS=VALUE");
      const std::string axis = cond.substr(0, eq), value = cond.substr(eq + 1);
      all = all && parsed[i].contains(axis) && axis_text(parsed[i][axis]) == value;
    }
    if (all) matches.push_back(static_cast<long>(i));
  }
  if (matches.size() != 1) {
    throw InputError("--baseline", "", join(spec) + (matches.empty() ? " names no row" : " names " + std::to_string(matches.size()) + " rows") +
                                           " of this study (hetsim report without --baseline shows each row's axis values)");
  }
  return matches.front();
}

}  // namespace

void add_report_options(CLI::App* cmd, ReportArgs& a) {
  cmd->add_option("db", a.db, "a results database written by hetsim sweep")->required();
  auto* csv = cmd->add_flag("--csv", a.csv, "comma-separated values with full precision");
  cmd->add_flag("--markdown", a.markdown, "a Markdown table")->excludes(csv);
  cmd->add_option("--sort", a.sort, "sort by this axis or figure (iteration_time_s, samples_per_s, mfu, efficiency)");
  cmd->add_option("--plot", a.plot, "write a PNG of one figure against one axis (needs python3 + matplotlib)")->excludes(csv)->check(output_file());
  cmd->add_option("--x", a.x, "with --plot: the axis on x (default: the study's first)");
  cmd->add_option("--lines", a.lines, "with --plot: one line per value of this axis (default: the second)");
  cmd->add_option("--y", a.y, "with --plot: iteration_time_s, samples_per_s (default), mfu or efficiency");
  cmd->add_option("--baseline", a.baseline,
                  "add the change of samples/s against this row: its number in the table, or AXIS=VALUE (repeatable) "
                  "naming one row, e.g. --baseline 'flags=[]' for an ablation")
      ->excludes("--plot");
}

int run_report(const ReportArgs& a) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(a.db, ec)) throw InputError(a.db, "", "no such results database (hetsim sweep writes one)");
  const ResultsDb db(a.db, ResultsDb::Mode::kRead);
  std::vector<ScenarioRow> rows = db.rows();
  // Axis columns: every axis of every row, in first-seen order.
  std::vector<std::string> axes;
  std::vector<nlohmann::json> parsed;
  for (const ScenarioRow& r : rows) {
    parsed.push_back(nlohmann::json::parse(r.axes, nullptr, false));
    if (!parsed.back().is_object()) parsed.back() = nlohmann::json::object();
    for (auto it = parsed.back().begin(); it != parsed.back().end(); ++it) {
      if (std::find(axes.begin(), axes.end(), it.key()) == axes.end()) axes.push_back(it.key());
    }
  }
  const std::vector<std::string> figures{"iteration_time_s", "samples_per_s", "mfu", "efficiency"};
  std::vector<size_t> order(rows.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  if (!a.sort.empty()) {
    const bool is_axis = std::find(axes.begin(), axes.end(), a.sort) != axes.end();
    const bool is_figure = std::find(figures.begin(), figures.end(), a.sort) != figures.end();
    if (!is_axis && !is_figure) {
      std::vector<std::string> all = axes;
      all.insert(all.end(), figures.begin(), figures.end());
      throw InputError("--sort", "", in_quotes(a.sort) + " is neither an axis nor a figure of this study" + did_you_mean(a.sort, all));
    }
    auto figure = [&](size_t i) {
      const ScenarioRow& r = rows[i];
      if (r.status != "ok") return 1e300;
      return a.sort == "iteration_time_s" ? r.iteration_time_s : a.sort == "samples_per_s" ? r.samples_per_s : a.sort == "mfu" ? r.mfu : r.efficiency;
    };
    std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
      if (is_figure) return figure(x) < figure(y);
      return axis_text(parsed[x].value(a.sort, nlohmann::json())) < axis_text(parsed[y].value(a.sort, nlohmann::json()));
    });
  }
  const long base = baseline_row(a.baseline, rows, parsed, order);
  const bool full_figures = a.csv || !a.plot.empty();
  std::vector<PlanCells> plans;
  bool plan_study = false;
  for (const ScenarioRow& r : rows) {
    plans.push_back(plan_cells(r, full_figures));
    plan_study = plan_study || !plans.back().plans.empty();
  }
  std::vector<std::string> header{"study"};
  header.insert(header.end(), axes.begin(), axes.end());
  for (const char* h : {"status", "iteration_time_s", "samples_per_s", "mfu", "efficiency", "peak_memory", "wall_s", "error"}) header.push_back(h);
  std::vector<std::vector<std::string>> table;
  for (size_t i : order) {
    const ScenarioRow& r = rows[i];
    std::vector<std::string> cells{r.study};
    for (const std::string& ax : axes) cells.push_back(parsed[i].contains(ax) ? axis_text(parsed[i][ax]) : "");
    cells.push_back(r.status);
    const bool ok = r.status == "ok";
    const bool full = a.csv || !a.plot.empty();
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
      cells.push_back(!ok || b.samples_per_s <= 0 ? "" : full ? format_double(f, change) : format_double("%+.1f%%", 100 * change));
    }
    table.push_back(std::move(cells));
  }
  if (plan_study) header.insert(header.end(), {"plans", "baseline_plan_samples_per_s"});
  if (base >= 0) header.push_back("samples_per_s_vs_baseline");
  if (a.csv || !a.plot.empty()) header[header.size() - (base >= 0 ? 4 : 3) - (plan_study ? 2 : 0)] = "peak_memory_bytes";
  if (!a.plot.empty()) return plot(a, axes, figures, header, table);
  if (a.csv) {
    std::cout << csv_line(header);
    for (const auto& row : table) std::cout << csv_line(row);
    return 0;
  }
  if (a.markdown) {
    auto line = [](const std::vector<std::string>& cells) {
      std::string s = "|";
      for (const std::string& c : cells) s += " " + markdown_cell(c) + " |";
      return s;
    };
    std::cout << line(header) << "\n|";
    for (size_t c = 0; c < header.size(); ++c) std::cout << "---|";
    std::cout << "\n";
    for (const auto& row : table) std::cout << line(row) << "\n";
    return 0;
  }
  for (std::string& h : header) h = printable(h);  // axis values and errors from inputs: no terminal escapes
  for (auto& row : table) {
    for (std::string& c : row) c = printable(c);
  }
  std::vector<size_t> width(header.size());
  for (size_t c = 0; c < header.size(); ++c) {
    width[c] = header[c].size();
    for (const auto& row : table) width[c] = std::max(width[c], row[c].size());
  }
  auto print = [&](const std::vector<std::string>& cells) {
    std::string s;
    for (size_t c = 0; c < cells.size(); ++c) s += cells[c] + std::string(width[c] - cells[c].size() + 2, ' ');
    while (!s.empty() && s.back() == ' ') s.pop_back();
    std::cout << s << "\n";
  };
  print(header);
  for (const auto& row : table) print(row);
  std::cout << rows.size() << " scenario(s) in " << printable(a.db) << "\n";
  return 0;
}

}  // namespace hetsim::cli
