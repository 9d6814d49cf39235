// File: cli/output/python_plot.cpp
#include "cli/output/python_plot.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <iostream>

#include "base/data_dir.hpp"
#include "base/temp_dir.hpp"
#include "base/text.hpp"
#include "cli/input_files.hpp"

namespace hetsim::cli {

int run_plot_script(const std::string& script, const std::string& csv, const std::string& out, const std::vector<std::string>& args,
                    const std::string& command, const std::string& without) {
  const std::string path = (data_root() / script).string();
  const TempDir scratch("plot");
  const std::filesystem::path table = scratch.new_file("table", ".csv", csv);
  const std::filesystem::path figure = scratch.new_file("figure", ".png");
  std::vector<std::string> words{"python3", path, table.string(), figure.string()};
  words.insert(words.end(), args.begin(), args.end());
  int rc = 127;
  for (const char* python : {"/usr/bin/python3", "python3"}) {
    words[0] = python;
    std::vector<char*> argv;
    for (std::string& s : words) argv.push_back(s.data());
    argv.push_back(nullptr);
    pid_t pid = 0;
    int status = 0;
    if (posix_spawnp(&pid, python, nullptr, nullptr, argv.data(), environ) != 0) continue;
    waitpid(pid, &status, 0);
    rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
    if (rc != 3 && rc != 127) break;  // 3: no matplotlib there; 127: no such interpreter
  }
  if (rc == 0) {
    write_file(out, slurp(figure), "--plot");
    return 0;
  }
  if (rc == 127 || rc == 3) {  // what this machine lacks, not a bug: exit 2, as other missing resources
    std::cerr << command << " needs python3 with matplotlib (Debian: apt-get install python3-matplotlib); " << without
              << " needs neither\n";
    return 2;
  } else {
    std::cerr << command << ": " << printable(path) << " failed (exit " << rc << ")\n";
  }
  return 1;
}

}  // namespace hetsim::cli
