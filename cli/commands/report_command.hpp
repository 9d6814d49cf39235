// File: cli/commands/report_command.hpp
// `hetsim report DB`: a study's results as a table (terminal, CSV or Markdown), one row per
// scenario in study order, its axes first; or, with --plot, a PNG of one figure against one axis,
// one line per value of another (studies/sweep/plot_report.py, Python + matplotlib).
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace hetsim::cli {

struct ReportArgs {
  std::string db;
  bool csv = false;
  bool markdown = false;
  std::string sort;  // an axis or figure to sort by (default: study order)
  std::string plot;  // PNG to write
  std::string x, lines, y;  // --plot: axis on x (default the first), one line per value of (default the second), figure
  std::vector<std::string> baseline;  // a row number of the table, or AXIS=VALUE conditions naming one row
};

void add_report_options(CLI::App* cmd, ReportArgs& a);
int run_report(const ReportArgs& a);

}  // namespace hetsim::cli
