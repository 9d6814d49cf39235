// File: python/python_sweep.cpp
#include "python/python_sweep.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "base/data_dir.hpp"
#include "base/input_error.hpp"
#include "base/process_tie.hpp"
#include "base/temp_dir.hpp"
#include "base/text.hpp"

#ifndef HETSIM_BUILD_PROGRAM
#error "HETSIM_BUILD_PROGRAM (the build tree's hetsim) must be defined by the build"
#endif

namespace hetsim::python {
namespace {

struct Ended {
  bool exited = false;
  int code = 0;  // the exit status, or the signal
};

// Runs `program args...` with stdin on /dev/null, stdout and stderr into the files given (/dev/null
// for an empty path), and waits for it. The program dies with the process that started it (a
// sweep's worker, stopped by Ctrl-C): it never runs on alone.
Ended run_program(const std::filesystem::path& program, const std::vector<std::string>& args, const std::filesystem::path& stdout_file,
                  const std::filesystem::path& stderr_file) {
  std::vector<std::string> words{program.string()};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  const std::string out = stdout_file.empty() ? "/dev/null" : stdout_file.string();
  const std::string err = stderr_file.empty() ? "/dev/null" : stderr_file.string();
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw InputError(program.string(), "", "the hetsim program cannot be started: fork failed: " + std::string(std::strerror(errno)));
  if (pid == 0) {  // only async-signal-safe calls from here to exec
    die_with_parent(parent);
    const int in = ::open("/dev/null", O_RDONLY);
    const int o = ::open(out.c_str(), O_WRONLY | O_TRUNC);
    const int e = ::open(err.c_str(), O_WRONLY | O_TRUNC);
    if (in < 0 || o < 0 || e < 0 || ::dup2(in, STDIN_FILENO) < 0 || ::dup2(o, STDOUT_FILENO) < 0 || ::dup2(e, STDERR_FILENO) < 0) _exit(127);
    ::execv(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? Ended{true, WEXITSTATUS(status)} : Ended{false, WTERMSIG(status)};
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

std::string ending(const Ended& e) {
  return e.exited ? "exited with " + std::to_string(e.code) : "was stopped by signal " + std::to_string(e.code);
}

}  // namespace

namespace {

// The hetsim program this module runs, and its version line.
struct CheckedProgram {
  std::filesystem::path path;
  std::string version;
};

const CheckedProgram& checked_program() {
  static const CheckedProgram program = [] {
    const std::filesystem::path prefix = install_prefix();
    std::filesystem::path p = prefix.empty() ? std::filesystem::path(HETSIM_BUILD_PROGRAM) : prefix / "bin" / "hetsim";
    if (::access(p.c_str(), X_OK) != 0) {
      throw InputError(p.string(), "", "the hetsim program is not there (hetsim.sweep runs each scenario, a hetsim command line, with it); "
                                       "build it (cmake --build build) or install it beside this module");
    }
    const TempDir scratch("program");
    const std::filesystem::path said = scratch.new_file("version", ".txt");
    const Ended e = run_program(p, {"--version"}, said, {});
    const std::string version = trimmed(slurp(said));
    if (!e.exited || e.code != 0 || version.rfind(std::string("hetsim ") + HETSIM_VERSION + " ", 0) != 0) {
      throw InputError(p.string(), "", "is not this module's hetsim (" + std::string(HETSIM_VERSION) + "): it says " +
                                           in_quotes(version) + "; a sweep's rows are keyed by the version that ran them");
    }
    return CheckedProgram{p, version};
  }();
  return program;
}

}  // namespace

std::filesystem::path hetsim_program() { return checked_program().path; }

ScenarioRunner program_scenario_runner() {
  const std::filesystem::path program = hetsim_program();
  ScenarioRunner runner;
  // Keyed as the program keys its own sweeps: the version and the build ID of the code that runs
  // them ("... build HEX)" ends its version line).
  const std::string& said = checked_program().version;
  const size_t build = said.rfind("build ");
  runner.version = std::string(HETSIM_VERSION) + " " + (build == std::string::npos ? said : said.substr(build, said.size() - build - 1));
  runner.check = [program](const std::vector<std::string>& args) {
    const TempDir scratch("check");
    const std::filesystem::path said = scratch.new_file("check", ".txt");
    std::vector<std::string> words{"-q", "scenario", "--check", "--row", said.string(), "--"};
    words.insert(words.end(), args.begin(), args.end());
    const Ended e = run_program(program, words, {}, {});
    if (e.exited && e.code == 0) return;
    const std::string why = trimmed(slurp(said));
    throw InputError("", "", why.empty() ? program.string() + " " + ending(e) + " checking the scenario" : why);
  };
  runner.run = [program](const std::vector<std::string>& args, const TempDir& scratch, bool with_plan) {
    const std::filesystem::path row = scratch.new_file("row", ".json");
    std::vector<std::string> words{"-q", "scenario", "--row", row.string()};
    if (with_plan) words.push_back("--with-plan");
    words.push_back("--");
    words.insert(words.end(), args.begin(), args.end());
    const Ended e = run_program(program, words, {}, {});
    std::string text = trimmed(slurp(row));
    std::error_code ec;
    std::filesystem::remove(row, ec);
    if (e.exited && e.code == 0 && !text.empty()) return text;
    // The program died running it (a crash, the out-of-memory killer): an error row, as a worker's death is.
    return nlohmann::json{{"status", "error"}, {"error", program.string() + " " + ending(e) + " running the scenario"}}.dump(
        -1, ' ', false, nlohmann::json::error_handler_t::replace);
  };
  return runner;
}

}  // namespace hetsim::python
