// File: base/data_dir.hpp
// Where shipped inputs live, how a command-line name ("a100-v100-2x2") becomes a file, and
// reading an input file whole.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace hetsim {

// The project root holding topologies/, workloads/ and kernels_profile/: $HETSIM_DATA_DIR if set,
// else PREFIX/share/hetsim beside an installed PREFIX/bin/hetsim, else the source tree this binary
// was built from.
[[nodiscard]] std::filesystem::path data_root();
// PREFIX of an installed hetsim (cmake --install, the .deb) whose code is running: the binary's
// PREFIX/bin/hetsim or the Python module's PREFIX/lib/python3/dist-packages, with PREFIX/share/hetsim
// beside; empty for a build tree.
[[nodiscard]] std::filesystem::path install_prefix();

// The files in `dir` whose name ends in `extension` (".csv", in any case), sorted; none when `dir` is missing.
[[nodiscard]] std::vector<std::filesystem::path> files_with_extension(const std::filesystem::path& dir,
                                                                    std::string_view extension);
// Names (file stems) of the shipped `*.yaml` files in `folder` under data_root(), sorted.
[[nodiscard]] std::vector<std::string> shipped_names(std::string_view folder);

// `arg` as given when it names an existing file, else data_root()/folder/arg.yaml.
// Throws InputError (naming `what`, e.g. "cluster", and the known names) when neither exists, or
// check_input_file's when `arg` is there but not a file (a symlink loop among them).
[[nodiscard]] std::filesystem::path resolve_input(const std::string& arg, std::string_view folder, std::string_view what);
// An input named inside `file` (a study's or sizing's cluster or model): the file of that relative
// path beside `file` where there is one, else `arg` as written (a shipped name, or a path from
// the working directory).
[[nodiscard]] std::string beside(const std::filesystem::path& file, const std::string& arg);

// Throws InputError unless `path` is a regular file that can be read: a missing path, a symlink
// loop, a dangling link, a directory, a pipe or a device is refused, each said as what it is,
// before anything opens it (reading a FIFO could block forever).
// A file that passes is remembered as read by this process (unless it is shipped data, under
// data_root()), for input_read_as.
void check_input_file(const std::filesystem::path& path);
// The path under which this process read the file at `path` (the same file, through any name) as
// an input, or "" when it read none there: an output there would overwrite an input, one a file
// named inside another names (a cluster's graph, a sizing's offers, a run file's cluster) too.
[[nodiscard]] std::string input_read_as(const std::filesystem::path& path);
// The whole file as bytes, after check_input_file ("" when a regular file cannot be read).
[[nodiscard]] std::string slurp(const std::filesystem::path& path);

}  // namespace hetsim
