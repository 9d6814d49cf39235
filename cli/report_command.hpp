// File: cli/report_command.hpp
// `hetsim report DB`: a study's results as a table (terminal, CSV or Markdown), one row per
// scenario in study order, its axes first.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace hetsim::cli {

struct ReportArgs {
  std::string db;
  bool csv = false;
  bool markdown = false;
  std::string sort;  // an axis or figure to sort by (default: study order)
};

void add_report_options(CLI::App* cmd, ReportArgs& a);
int run_report(const ReportArgs& a);

}  // namespace hetsim::cli
