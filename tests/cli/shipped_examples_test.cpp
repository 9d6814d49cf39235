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

#include "base/field_override.hpp"
#include "base/input_error.hpp"
#include "planner/hybrid/hybrid_plan_file.hpp"
#include "studies/validation/published_mfu.hpp"
#include "studies/validation/run_file.hpp"
#include "test_support.hpp"
#include "cli/markdown_examples.hpp"
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
    if (root.IsSequence()) {  // validation runs, with the clusters, models and hybrid plans they name
      for (const ValidationRun& run : load_runs(file)) {
        if (!run.cluster.empty()) (void)load_cluster(run.cluster);
        if (!run.training.model.empty()) (void)load_model(run.training.model);
        if (run.training.plan.empty() || plan_file_kind(run.training.plan) != "hybrid") continue;
        std::vector<FieldOverride> nodes;  // the run's `nodes`, as validate applies them
        if (run.nodes > 0) nodes.push_back(parse_override("cluster.node_types[0].count=" + std::to_string(run.nodes)));
        const Cluster cluster = load_cluster(run.cluster, nodes);
        ModelSpec model = load_model(run.training.model);
        if (run.training.global_batch > 0) model.training.global_batch = run.training.global_batch;
        resolve_experts(model, cluster.gpu_count());
        (void)load_hybrid_plan(run.training.plan, model, cluster);
      }
    } else if (has("kind") && has("pipelines")) {  // a hybrid plan: read through a run file one folder up
      bool named = false;
      for (const auto& e : fs::directory_iterator(file.parent_path().parent_path())) {
        named |= e.path().extension() == ".yaml" && read(e.path()).find("plan: " + file.parent_path().filename().string() + "/" +
                                                                       file.filename().string()) != std::string::npos;
      }
      if (!named) return "a hybrid plan that no run file one folder up reads";
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
    } else if (has("switches")) {  // a network graph: read through a cluster file beside it or one folder up
      bool read_by_a_cluster = false;
      for (const fs::path& dir : {file.parent_path(), file.parent_path().parent_path()}) {
        for (const auto& e : fs::directory_iterator(dir)) {
          if (e.path().extension() != ".yaml" || read(e.path()).find(file.filename().string()) == std::string::npos) continue;
          (void)load_cluster(e.path());
          read_by_a_cluster = true;
        }
      }
      if (!read_by_a_cluster) return "a network graph that no cluster file beside it (or one folder up) reads";
    } else if (has("published_mfu")) {
      (void)load_published_mfu(file);
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

TEST(ShippedExamples, EveryCommandQuotedInTheReadmeRunsAsShown) {
  // Commands run in a scratch folder that sees the source tree's folders; `$ cat FILE` writes
  // the lines shown after it to FILE. A command shown with "error:" lines must print exactly
  // them and exit 2; any other must exit 0 (markdown_examples.hpp).
  EXPECT_GE(test::run_quoted_commands(test::source_dir() / "README.md"), 4u);
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
