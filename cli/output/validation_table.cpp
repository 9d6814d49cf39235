// File: cli/output/validation_table.cpp
#include "cli/output/validation_table.hpp"

#include <cstdio>

#include "base/text.hpp"
#include "base/units.hpp"
#include "studies/validation/calibration.hpp"

namespace hetsim::cli {

std::string shown(const std::string& key, double v) {
  if (key.ends_with("_Bps")) return format_double("%.1f GB/s", v / 1e9);
  if (key.ends_with("_bytes")) return format_bytes(v);
  if (key.ends_with("_s") && key != "samples_per_s" && key != "tokens_per_s") return format_time(v);
  if (key == "mfu") return format_double("%.1f %%", 100 * v);
  if (key == "tflops" || key == "tflops_per_gpu") return format_double("%.1f TFLOP/s", v);
  return format_double("%.4g /s", v);
}

std::string pct(double x, bool sign) { return format_double(sign ? "%+.1f %%" : "%.1f %%", 100 * x); }

// The table as Markdown: run, figure, measured, predicted, error, class, source.
std::string markdown(const std::vector<RunResult>& results) {
  std::string md = "| run | figure | measured | predicted | error | class | source |\n|---|---|---:|---:|---:|---|---|\n";
  for (const RunResult& r : results) {
    const std::string cls = r.run->class_name.empty() ? default_class_name(r) : r.run->class_name;
    for (size_t i = 0; i < r.figures.size(); ++i) {
      const FigureResult& f = r.figures[i];
      // Names, classes and sources are text from the runs files: a | or a newline in one would
      // break the table.
      md.append("| ").append(markdown_cell(r.run->name)).append(" | ").append(f.key).append(" | ").append(shown(f.key, f.measured));
      if (r.failure.empty()) {
        md.append(" | ").append(shown(f.key, f.predicted)).append(" | ").append(pct(f.error(), true));
        if (const auto h = r.held_out_error(i)) md.append(" (fitted on; source left out: ").append(pct(*h, true)).append(")");
      } else {
        md.append(" | no prediction: ").append(markdown_cell(r.failure)).append(" | ");
      }
      md.append(" | ").append(markdown_cell(cls)).append(" | ").append(markdown_cell(r.run->source)).append(" |\n");
    }
  }
  return md;
}

// NN-<name>.trace.json with every character of the run's name outside [A-Za-z0-9._-] as '_' (names
// come from run files: no path separators or "..").
std::string trace_file_name(size_t index, const std::string& name) {
  std::string safe;
  for (const char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
    safe.push_back(ok || (c == '.' && !safe.empty()) ? c : '_');
  }
  char prefix[24];
  std::snprintf(prefix, sizeof prefix, "%02zu-", index + 1);
  return prefix + safe.substr(0, 120) + ".trace.json";
}

}  // namespace hetsim::cli
