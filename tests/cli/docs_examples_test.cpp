// File: tests/cli/docs_examples_test.cpp
// The user's guide (docs/) is a test too: every "$ hetsim ..." command quoted in docs/*.md and
// docs/formats/*.md runs as shown (as the README's, markdown_examples.hpp), and every ```yaml block
// that starts with `# file: KIND` loads with the loader of that kind. Also: the README stays short,
// the guide's pages are all there, and no user-facing text points outside the repository at the
// design notes.
#include <gtest/gtest.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

#include "base/input_error.hpp"
#include "cli/markdown_examples.hpp"
#include "kernels_profile/calibration_profile.hpp"
#include "kernels_profile/device.hpp"
#include "planner/hybrid/hybrid_plan_file.hpp"
#include "studies/sizing/sizing_file.hpp"
#include "studies/validation/run_file.hpp"
#include "test_support.hpp"
#include "topologies/cluster.hpp"
#include "workloads/model.hpp"

namespace hetsim {
namespace {

namespace fs = std::filesystem;

// docs/*.md and docs/formats/*.md, sorted.
std::vector<fs::path> doc_pages() {
  std::vector<fs::path> pages;
  for (const char* folder : {"docs", "docs/formats"}) {
    const fs::path dir = test::source_dir() / folder;
    if (!fs::exists(dir)) continue;
    for (const auto& e : fs::directory_iterator(dir)) {
      if (e.is_regular_file() && e.path().extension() == ".md") pages.push_back(e.path());
    }
  }
  std::sort(pages.begin(), pages.end());
  return pages;
}

TEST(DocsExamples, EveryPageOfTheGuideIsThere) {
  for (const char* page : {"README.md", "what-if.md", "ablations.md", "sizing.md", "validation.md", "planner.md", "cli.md", "install.md",
                           "python.md", "report-schema.md", "formats/cluster.md", "formats/device.md", "formats/model.md",
                           "formats/spmd-plan.md", "formats/hybrid-plan.md", "formats/study.md", "formats/sizing.md",
                           "formats/validation-runs.md", "formats/calibration-profile.md"}) {
    EXPECT_TRUE(fs::is_regular_file(test::source_dir() / "docs" / page)) << "docs/" << page << " is missing";
  }
}

TEST(DocsExamples, TheReadmeStaysShort) {
  std::istringstream in(test::read_text(test::source_dir() / "README.md"));
  size_t lines = 0;
  for (std::string line; std::getline(in, line);) ++lines;
  EXPECT_LE(lines, 300u) << "README.md has " << lines << " lines; move the details into docs/";
}

TEST(DocsExamples, NoUserFacingTextPointsAtTheDesignNotes) {
  // README.md, the guide, and the CLI's sources (its --help texts and messages) point into the
  // repository only.
  std::vector<fs::path> files{test::source_dir() / "README.md"};
  for (const char* folder : {"docs", "cli"}) {
    for (const auto& e : fs::recursive_directory_iterator(test::source_dir() / folder)) {
      const std::string ext = e.path().extension().string();
      if (e.is_regular_file() && (ext == ".md" || ext == ".cpp" || ext == ".hpp")) files.push_back(e.path());
    }
  }
  for (const fs::path& f : files) {
    std::istringstream in(test::read_text(f));
    int n = 0;
    for (std::string line; std::getline(in, line);) {
      ++n;
      for (const char* word : {"DESIGN.md", "../shared", "/work/shared"}) {
        EXPECT_EQ(line.find(word), std::string::npos) << fs::relative(f, test::source_dir()).string() << ":" << n << ": " << line;
      }
    }
  }
}

TEST(DocsExamples, TheCliPagesHelpTextsAreWhatTheBinaryPrints) {
  // docs/cli.md quotes each subcommand's --help (without the exit-code paragraph): `hetsim list`'s
  // had gone stale (it said REQUIRED where the binary no longer did). Each block is the binary's.
  std::istringstream in(test::read_text(test::source_dir() / "docs/cli.md"));
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  size_t blocks = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (!lines[i].starts_with("### hetsim ")) continue;
    const std::string sub = lines[i].substr(11);
    size_t j = i + 1;
    while (j < lines.size() && lines[j] != "```") ++j;
    std::string quoted;
    for (++j; j < lines.size() && lines[j] != "```"; ++j) quoted += lines[j] + "\n";
    std::string help = test::run_hetsim(sub + " --help", test::Capture::kStdout).output;
    const std::string usage = "Usage: " + test::hetsim_binary() + " ";
    if (const size_t u = help.find(usage); u != std::string::npos) help.replace(u, usage.size(), "Usage: hetsim ");
    // Less the exit-code paragraph (the page gives it once) and the blank line before it.
    if (const size_t e = help.find("\n\nExit codes:"); e != std::string::npos) {
      const size_t end = help.find('\n', e + 2);
      help.erase(e + 1, end == std::string::npos ? std::string::npos : end + 1 - (e + 1));
    }
    EXPECT_EQ(quoted, help) << "docs/cli.md, ### hetsim " << sub << ": the quoted --help differs from the binary's";
    ++blocks;
  }
  EXPECT_GE(blocks, 11u);
}

// The pages that quote commands.
std::vector<fs::path> pages_with_commands() {
  std::vector<fs::path> out;
  for (const fs::path& page : doc_pages()) {
    if (!test::quoted_commands(page).empty()) out.push_back(page);
  }
  return out;
}

// One test per page that quotes commands: each page's run within a test's time limit of their own
// (all of them together took over it under the sanitizers on CI's two cores).
class DocsPageCommands : public ::testing::TestWithParam<fs::path> {};

TEST_P(DocsPageCommands, RunAsShown) { EXPECT_GT(test::run_quoted_commands(GetParam()), 0u); }

INSTANTIATE_TEST_SUITE_P(DocsExamples, DocsPageCommands, ::testing::ValuesIn(pages_with_commands()),
                         [](const ::testing::TestParamInfo<fs::path>& info) {
                           std::string name = fs::relative(info.param, test::source_dir() / "docs").replace_extension().string();
                           for (char& c : name) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return name;
                         });

TEST(DocsExamples, TheGuideQuotesCommandsToRun) {
  size_t quoted = 0;
  for (const fs::path& page : doc_pages()) quoted += test::quoted_commands(page).size();
  EXPECT_GT(quoted, 10u);
}

// Loads `file` as `kind` (the word after "# file: "); empty when it loads, else what went wrong.
std::string load_as(const std::string& kind, const fs::path& file) {
  try {
    if (kind == "cluster") (void)load_cluster(file);
    else if (kind == "model") (void)load_model(file);
    else if (kind == "device") (void)load_device(file);
    else if (kind == "runs") (void)load_runs(file);
    else if (kind == "sizing") (void)load_sizing(file);
    else if (kind == "calibration") (void)load_calibration_profile(file);
    else if (kind == "graph") {  // a network graph, for the nodes of the shipped graph-h100-4 (4 nodes of 8 GPUs and NICs)
      const Cluster c = test::shipped_cluster("graph-h100-4");
      std::vector<GraphNodeInfo> nodes;
      for (int n = 0; n < c.node_count(); ++n) nodes.push_back(GraphNodeInfo{8, 8 * n, 8});
      (void)load_network_graph(file, nodes);
    }
    else if (kind == "hybrid-plan") {  // for the model and cluster the plan names
      const YAML::Node root = YAML::LoadFile(file.string());
      const ModelSpec model = load_model(test::shipped("workloads", root["model"].as<std::string>()));
      (void)load_hybrid_plan(file, model, test::shipped_cluster(root["cluster"].as<std::string>()));
    } else if (kind == "study") {
      const test::CliRun r = test::run_hetsim_redirected("sweep '" + file.string() + "' --dry-run --db '" + file.string() + ".db' 2>&1");
      if (r.rc != 0) return "sweep --dry-run exited " + std::to_string(r.rc) + ": " + r.output;
    } else {
      return "unknown kind \"" + kind + "\" (cluster, graph, model, device, study, sizing, hybrid-plan, runs, calibration)";
    }
  } catch (const InputError& e) {
    return e.what();
  }
  if (kind == "sizing") {  // and the whole sizing checks out as the command sees it
    const test::CliRun r = test::run_hetsim_redirected("size '" + file.string() + "' --dry-run --db '" + file.string() + ".db' 2>&1");
    if (r.rc != 0) return "size --dry-run exited " + std::to_string(r.rc) + ": " + r.output;
  }
  return {};
}

TEST(DocsExamples, EveryYamlBlockOfTheGuideLoads) {
  // A ```yaml block is either a file of a known kind, said on its first line (`# file: KIND`),
  // and loads as one; or it is not allowed (an example that no test loads drifts from the code).
  const fs::path dir = fs::temp_directory_path() / ("hetsim-docs-yaml-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  size_t loaded = 0;
  for (const fs::path& page : doc_pages()) {
    const std::string name = fs::relative(page, test::source_dir()).string();
    for (const test::YamlBlock& b : test::yaml_blocks(page)) {
      const std::string first = b.text.substr(0, b.text.find('\n'));
      const std::string tag = "# file: ";
      if (first.rfind(tag, 0) != 0) {
        ADD_FAILURE() << name << ":" << b.line << ": a yaml block must start with \"# file: KIND\" (a test loads it)";
        continue;
      }
      const std::string kind = first.substr(tag.size());
      // A device is looked up by its file name: the file is named as the device.
      fs::path file = dir / ("block-" + std::to_string(loaded) + ".yaml");
      if (kind == "device") {
        const YAML::Node root = YAML::Load(b.text);
        ASSERT_TRUE(root["name"]) << name << ":" << b.line << ": a device block needs a name";
        fs::create_directories(dir / ("block-" + std::to_string(loaded)));
        file = dir / ("block-" + std::to_string(loaded)) / (root["name"].as<std::string>() + ".yaml");
      }
      std::ofstream(file) << b.text;
      EXPECT_EQ(load_as(kind, file), "") << name << ":" << b.line << ": # file: " << kind;
      ++loaded;
    }
  }
  EXPECT_GE(loaded, 8u);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace hetsim
