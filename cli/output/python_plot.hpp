// File: cli/output/python_plot.hpp
// Figures are drawn by Python scripts shipped with hetsim (matplotlib from Debian), run from the
// commands that offer --plot.
#pragma once

#include <string>
#include <vector>

namespace hetsim::cli {

// Runs the script at `script` (relative to the data root) as `script TABLE.csv FIGURE.png ARGS`,
// under Debian's python3 first (where apt installs python3-matplotlib), then the one on PATH.
// TABLE.csv holds `csv`; both files live in a private temporary folder (base/temp_dir.hpp), and
// the figure is then copied to `out` with every write checked (a failed write is an InputError
// naming `out`, never a success). Returns 0 when `out` holds the figure. When no python3 with
// matplotlib is found it prints, on stderr, what to install and that `without` works without it,
// and returns 2 (a missing resource, as exit 2 means); any other failure of the script returns 1.
int run_plot_script(const std::string& script, const std::string& csv, const std::string& out, const std::vector<std::string>& args,
                    const std::string& command, const std::string& without);

}  // namespace hetsim::cli
