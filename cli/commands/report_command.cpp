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
#include "studies/sweep/results_table.hpp"

namespace hetsim::cli {
namespace {

std::string csv_line(const std::vector<std::string>& cells) {
  std::string s;
  for (size_t c = 0; c < cells.size(); ++c) s.append(c ? "," : "").append(csv_field(cells[c]));
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
  if (rc == 0) std::cout << "wrote " << printable(a.plot) << ": " << y << " against " << x << (lines.empty() ? "" : ", one line per " + lines) << "\n";
  return rc;
}

}  // namespace

void add_report_options(CLI::App* cmd, ReportArgs& a) {
  cmd->add_option("db", a.db, "a results database written by hetsim sweep")->required();
  auto* csv = cmd->add_flag("--csv", a.csv, "comma-separated values with full precision");
  cmd->add_flag("--markdown", a.markdown, "a Markdown table")->excludes(csv);
  cmd->add_option("--sort", a.sort, "sort by this axis or figure (iteration_time_s, samples_per_s, mfu, efficiency), ascending: the smallest first");
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
  check_paths_apart({{"--plot", a.plot}}, {{"the results database", a.db}});
  ResultsTable t = results_table(a.db, ResultsTableOptions{a.sort, a.baseline, a.csv || !a.plot.empty()});
  std::vector<std::string>& header = t.header;
  std::vector<std::vector<std::string>>& table = t.rows;
  if (!a.plot.empty()) return plot(a, t.axes, t.figures, header, table);
  if (a.csv) {
    std::cout << csv_line(header);
    for (const auto& row : table) std::cout << csv_line(row);
    return 0;
  }
  if (a.markdown) {
    auto line = [](const std::vector<std::string>& cells) {
      std::string s = "|";
      for (const std::string& c : cells) s.append(" ").append(markdown_cell(c)).append(" |");
      return s;
    };
    std::cout << line(header) << "\n|";
    for (size_t c = 0; c < header.size(); ++c) std::cout << "---|";
    std::cout << "\n";
    for (const auto& row : table) std::cout << line(row) << "\n";
    for (const std::string& note : t.notes) std::cout << "\nnote: " << printable(note) << "\n";
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
  std::cout << t.scenarios << " scenario(s) in " << printable(a.db) << "\n";
  for (const std::string& note : t.notes) std::cout << "note: " << printable(note) << "\n";
  return 0;
}

}  // namespace hetsim::cli
