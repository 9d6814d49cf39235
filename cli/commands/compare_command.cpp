// File: cli/commands/compare_command.cpp
#include "cli/commands/compare_command.hpp"

#include <CLI/CLI.hpp>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "base/input_error.hpp"
#include "base/temp_dir.hpp"
#include "base/text.hpp"
#include "cli/app.hpp"
#include "cli/common_args.hpp"
#include "cli/input_files.hpp"
#include "cli/output/comparison.hpp"

namespace hetsim::cli {
namespace {

bool is_run(const std::string& w) { return w == "simulate" || w == "plan"; }

std::string joined(const std::vector<std::string>& words) {
  std::string s;
  for (const std::string& w : words) s += (s.empty() ? "" : " ") + (w.find_first_of(" '*[]") == std::string::npos ? printable(w) : "'" + printable(w) + "'");
  return s;
}

// An option word's name ("--trace" of "--trace=t.json", "-c"), or "" for a value or a subcommand.
std::string option_name(const std::string& w) {
  if (w.rfind("--", 0) == 0 && w.size() > 2) return w.substr(0, w.find('='));
  if (w.size() == 2 && w[0] == '-' && std::isalpha(static_cast<unsigned char>(w[1])) != 0) return w;
  return "";
}

// What `option` is given in `words` ("--trace P" or "--trace=P"), or "" when it is not.
std::string option_value(const std::vector<std::string>& words, const std::string& option) {
  for (size_t i = 0; i < words.size(); ++i) {
    if (words[i].rfind(option + "=", 0) == 0) return words[i].substr(option.size() + 1);
    if (words[i] == option && i + 1 < words.size()) return words[i + 1];
  }
  return "";
}

// B given as words added to A's: an option A gives that B gives again would be given twice (only
// --set adds up). Said here, naming the option, rather than as the option parser's count.
void refuse_options_given_twice(const std::vector<std::string>& sa, const std::vector<std::string>& sb) {
  for (const std::string& w : sb) {
    const std::string opt = option_name(w);
    if (opt.empty() || opt == "--set") continue;
    if (std::any_of(sa.begin(), sa.end(), [&](const std::string& x) { return option_name(x) == opt; })) {
      throw InputError("compare", "", "scenario B's words are added to A's, and A gives " + opt +
                                          " already; to change it, give B whole (starting with simulate or plan)");
    }
  }
}

// Both scenarios writing one --trace: the second would overwrite the first without a word.
void refuse_one_trace_for_both(const std::vector<std::string>& sa, const std::vector<std::string>& sb) {
  const std::string ta = option_value(sa, "--trace"), tb = option_value(sb, "--trace");
  if (ta.empty() || tb.empty()) return;
  std::error_code ea, eb;
  const auto ca = std::filesystem::weakly_canonical(ta, ea), cb = std::filesystem::weakly_canonical(tb, eb);
  if (ta == tb || (!ea && !eb && ca == cb)) {
    throw InputError("compare", "", "both scenarios would write their trace to " + in_quotes(ta) +
                                        ", B's over A's; give B whole (starting with simulate or plan) with a --trace of its own");
  }
}

// Sends stdout (C and C++ streams alike) to /dev/null while it lives.
class SilencedStdout {
 public:
  SilencedStdout() {
    flush();
    saved_ = ::dup(STDOUT_FILENO);
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, STDOUT_FILENO);
    ::close(null);
  }
  ~SilencedStdout() {
    flush();
    ::dup2(saved_, STDOUT_FILENO);
    ::close(saved_);
  }
  SilencedStdout(const SilencedStdout&) = delete;
  SilencedStdout& operator=(const SilencedStdout&) = delete;

 private:
  static void flush() {
    std::cout.flush();
    std::fflush(stdout);
  }
  int saved_ = -1;
};

// Runs one scenario in this process with its summary silenced; returns its report JSON.
nlohmann::json run_scenario(std::vector<std::string> words, const std::string& side) {
  const TempDir scratch("compare");
  const std::filesystem::path report = scratch.new_file("report-" + side, ".json");
  words.insert(words.begin(), "hetsim");
  words.insert(words.end(), {"--report", report.string()});
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  int rc = 0;
  {
    const SilencedStdout silenced;
    rc = run_cli(static_cast<int>(argv.size()), argv.data(), true);
  }
  if (rc != 0 && rc != kExitInfeasible) throw InputError("compare", "", "scenario " + side + " (" + joined({words.begin() + 1, words.end() - 2}) + ") exited " + std::to_string(rc));
  nlohmann::json j = nlohmann::json::parse(std::ifstream(report), nullptr, false);
  if (j.is_discarded()) throw std::runtime_error("compare: scenario " + side + " wrote no report");
  return j;
}

}  // namespace

void add_compare_options(CLI::App* cmd, CompareArgs& a) {
  cmd->add_option("--report", a.report, "write both reports and the differences as JSON")->check(output_file());
  cmd->prefix_command();
  cmd->footer("Scenarios: A... --vs B..., each a simulate or plan command line; a B that does not start with simulate or plan "
              "is A's command line plus B's words.\n  e.g. hetsim compare simulate -c a100-v100-2x2 -m gpt3-1.3b --strategy "
              "dp-proportional --vs --set 'cluster.node_types[*].nic.bandwidth=400Gbps'");
}

int run_compare(const CompareArgs& a, const std::vector<std::string>& words) {
  const auto vs = std::find(words.begin(), words.end(), "--vs");
  std::vector<std::string> sa(words.begin(), vs), sb;
  if (vs == words.end() || sa.empty() || vs + 1 == words.end()) {
    throw InputError("compare", "", "give two scenarios: A... --vs B... (A a simulate or plan command line)");
  }
  if (!is_run(sa.front())) throw InputError("compare", "", "scenario A must start with simulate or plan, not " + in_quotes(sa.front()));
  sb.assign(vs + 1, words.end());
  if (std::find(sb.begin(), sb.end(), "--report") != sb.end() || std::find(sa.begin(), sa.end(), "--report") != sa.end()) {
    throw InputError("compare", "", "--report goes before the scenarios (hetsim compare --report R.json A... --vs B...)");
  }
  for (const std::vector<std::string>* side : {&sa, &sb}) {  // help runs nothing: no report to compare
    for (const std::string& w : *side) {
      if (w == "--help" || w == "-h") {
        throw InputError("compare", "", w + " inside a scenario runs nothing to compare; `hetsim simulate --help` and "
                                            "`hetsim plan --help` list a scenario's options, `hetsim compare --help` compare's");
      }
    }
  }
  if (!is_run(sb.front())) {
    refuse_options_given_twice(sa, sb);
    sb.insert(sb.begin(), sa.begin(), sa.end());
  }
  refuse_one_trace_for_both(sa, sb);
  const nlohmann::json ra = run_scenario(sa, "A"), rb = run_scenario(sb, "B");
  std::cout << "A: hetsim " << joined(sa) << "\nB: hetsim " << joined(sb) << "\n\n";
  const nlohmann::json diff = print_comparison(ra, rb);
  if (!a.report.empty()) {
    write_file(a.report,
               nlohmann::json{{"a", {{"command", joined(sa)}, {"report", ra}}}, {"b", {{"command", joined(sb)}, {"report", rb}}},
                              {"differences", diff}}
                       .dump(2) + "\n",
               "--report");
  }
  // A side that does not fit has no figures to compare: the table says which, the exit code too.
  return ra.value("feasible", false) && rb.value("feasible", false) ? 0 : kExitInfeasible;
}

}  // namespace hetsim::cli
