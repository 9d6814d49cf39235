// File: tests/cli/shipped_examples_test.cpp
// Every shipped example is a test: each YAML file under studies/, topologies/, workloads/ and
// docs/ loads and passes its checks (studies and sizings through `--dry-run`), and every command
// quoted in the README's fenced blocks ("$ ..." lines) runs as shown. A format change that breaks
// a shipped file, or a README example that no longer works, fails here.
#include <gtest/gtest.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <sstream>

#include "base/input_error.hpp"
#include "studies/validation/run_file.hpp"
#include "test_support.hpp"
#include "topologies/cluster.hpp"
#include "workloads/model.hpp"

namespace hetsim {
namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& p) {
  std::ostringstream s;
  s << std::ifstream(p).rdbuf();
  return s.str();
}

std::string quoted(const std::string& word) { return "'" + word + "'"; }

// What went wrong loading one shipped file; empty when it loads.
std::string problem_of(const fs::path& file) {
  const YAML::Node root = YAML::LoadFile(file.string());
  const auto has = [&](const char* key) { return root.IsMap() && root[key]; };
  try {
    if (root.IsSequence()) {  // validation runs, with the clusters and models they name
      for (const ValidationRun& run : load_runs(file)) {
        if (!run.cluster.empty()) (void)load_cluster(run.cluster);
        if (!run.training.model.empty()) (void)load_model(run.training.model);
      }
    } else if (has("vary") || has("run")) {
      const test::CliRun r = test::run_hetsim_redirected("sweep " + quoted(file.string()) + " --dry-run 2>&1");
      if (r.rc != 0) return "sweep --dry-run exited " + std::to_string(r.rc) + ": " + r.output;
    } else if (has("offers") && has("model")) {
      const test::CliRun r = test::run_hetsim_redirected("size " + quoted(file.string()) + " --dry-run 2>&1");
      if (r.rc != 0) return "size --dry-run exited " + std::to_string(r.rc) + ": " + r.output;
    } else if (has("offers")) {  // an offers file: read through the sizing files beside it
      bool named = false;
      for (const auto& e : fs::directory_iterator(file.parent_path())) {
        named |= e.path() != file && e.path().extension() == ".yaml" && read(e.path()).find("offers: " + file.filename().string()) != std::string::npos;
      }
      if (!named) return "an offers file that no sizing file beside it reads";
    } else if (has("node_types")) {
      (void)load_cluster(file);
    } else if (has("family") || has("layers")) {
      (void)load_model(file);
    } else {
      return "a YAML file of no kind this test knows: teach it the loader";
    }
  } catch (const InputError& e) {
    return e.what();
  }
  return {};
}

TEST(ShippedExamples, EveryYamlFileLoads) {
  size_t checked = 0;
  for (const char* folder : {"studies", "topologies", "workloads", "docs"}) {
    const fs::path root = test::source_dir() / folder;
    if (!fs::exists(root)) continue;
    for (const auto& e : fs::recursive_directory_iterator(root)) {
      const std::string ext = e.path().extension().string();
      if (!e.is_regular_file() || (ext != ".yaml" && ext != ".yml")) continue;
      EXPECT_EQ(problem_of(e.path()), "") << fs::relative(e.path(), test::source_dir()).string();
      ++checked;
    }
  }
  EXPECT_GT(checked, 60u);  // 68 when this test was written
}

// One "$ ..." command of a README block, with the lines shown after it.
struct Quoted {
  std::string command;
  std::string shown;
  int line = 0;
};

std::vector<Quoted> readme_commands() {
  std::istringstream in(read(test::source_dir() / "README.md"));
  std::vector<Quoted> out;
  std::string line;
  bool fenced = false, collecting = false;  // collecting: lines shown after a command, until its block ends
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.rfind("```", 0) == 0) {
      fenced = !fenced;
      collecting = false;
      continue;
    }
    if (!fenced) continue;
    if (line.rfind("$ ", 0) == 0) {
      Quoted q{line.substr(2), "", n};
      while (!q.command.empty() && q.command.back() == '\\' && std::getline(in, line)) {  // continued
        ++n;
        q.command.pop_back();
        q.command += " " + line;
      }
      out.push_back(q);
      collecting = true;
    } else if (collecting) {
      out.back().shown += line + "\n";
    }
  }
  return out;
}

TEST(ShippedExamples, EveryCommandQuotedInTheReadmeRunsAsShown) {
  // Commands run in a scratch folder that sees the source tree's folders; `$ cat FILE` writes
  // the lines shown after it to FILE. A command shown with "error:" lines must print exactly
  // them and exit 2; any other must exit 0.
  const fs::path dir = fs::temp_directory_path() / ("hetsim-readme-test-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const char* folder : {"studies", "topologies", "workloads", "tests", "kernels_profile", "docs"}) {
    if (fs::exists(test::source_dir() / folder)) fs::create_directory_symlink(test::source_dir() / folder, dir / folder);
  }
  const std::vector<Quoted> commands = readme_commands();
  ASSERT_GT(commands.size(), 5u);
  for (const Quoted& q : commands) {
    std::istringstream words(q.command);
    std::string first;
    words >> first;
    if (first == "cat") {
      std::string file;
      words >> file;
      std::ofstream(dir / file) << q.shown;
      continue;
    }
    ASSERT_TRUE(first == "hetsim" || first == "build/cli/hetsim") << "README.md:" << q.line << ": " << q.command;
    std::string rest((std::istreambuf_iterator<char>(words)), std::istreambuf_iterator<char>());
    const bool error_shown = q.shown.find(": error: ") != std::string::npos;
    const std::string cmd = "cd " + quoted(dir.string()) + " && " + test::hetsim_binary() + " -q " + rest + (error_shown ? " 2>&1 >/dev/null" : " 2>&1");
    FILE* p = popen(cmd.c_str(), "r");
    ASSERT_NE(p, nullptr);
    std::string output;
    char buf[4096];
    while (size_t k = fread(buf, 1, sizeof buf, p)) output.append(buf, k);
    const int status = pclose(p);
    const int rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (error_shown) {
      EXPECT_EQ(rc, 2) << "README.md:" << q.line << ": " << q.command;
      EXPECT_EQ(output, q.shown) << "README.md:" << q.line << ": " << q.command;
    } else {
      EXPECT_EQ(rc, 0) << "README.md:" << q.line << ": " << q.command << "\n" << output;
    }
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace hetsim

namespace hetsim {
namespace {

// The line starting with `prefix` in `text` (empty if none).
std::string line_starting(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(prefix, 0) == 0) return line;
  }
  return "";
}

TEST(ShippedExamples, TheDemoChoosesTheStrategyTheReadmeShows) {
  // The README's "What the demo prints" block is `hetsim plan` on the default cluster and model
  // (scripts/demo): the chosen strategy and its shape must still be the ones shown.
  const std::string readme = read(test::source_dir() / "README.md");
  const size_t at = readme.find("## What the demo prints");
  ASSERT_NE(at, std::string::npos);
  const std::string shown = readme.substr(at, readme.find("```\n\n", at) - at);
  const test::CliRun r = test::run_hetsim("plan --no-upper-bound", test::Capture::kStdout);
  ASSERT_EQ(r.rc, 0);
  const std::string chosen = line_starting(r.output, "chosen: ");
  ASSERT_FALSE(chosen.empty()) << r.output;
  EXPECT_EQ(line_starting(shown, "chosen: "), chosen);
  EXPECT_EQ(line_starting(shown, "hybrid plan: "), line_starting(r.output, "hybrid plan: "));
}

}  // namespace
}  // namespace hetsim
