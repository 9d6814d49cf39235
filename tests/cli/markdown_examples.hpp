// File: tests/cli/markdown_examples.hpp
// What the documentation shows, as tests run it: the "$ ..." commands of a Markdown file's fenced
// blocks, with the lines shown after each, and its ```yaml blocks. Shared by the README's test
// (shipped_examples_test.cpp) and the docs' (docs_examples_test.cpp).
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace hetsim::test {

inline std::string read_text(const std::filesystem::path& p) {
  std::ostringstream s;
  s << std::ifstream(p).rdbuf();
  return s.str();
}

// One "$ ..." command of a fenced block, with the lines shown after it.
struct QuotedCommand {
  std::string command;
  std::string shown;
  int line = 0;
};

inline std::vector<QuotedCommand> quoted_commands(const std::filesystem::path& markdown) {
  std::istringstream in(read_text(markdown));
  std::vector<QuotedCommand> out;
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
      QuotedCommand q{line.substr(2), "", n};
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

// One ```yaml block: its text and the line of its first line.
struct YamlBlock {
  std::string text;
  int line = 0;
};

inline std::vector<YamlBlock> yaml_blocks(const std::filesystem::path& markdown) {
  std::istringstream in(read_text(markdown));
  std::vector<YamlBlock> out;
  std::string line;
  bool in_yaml = false, fenced = false;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.rfind("```", 0) == 0) {
      if (!fenced) {
        fenced = true;
        in_yaml = line == "```yaml" || line == "```yml";
        if (in_yaml) out.push_back({"", n + 1});
      } else {
        fenced = in_yaml = false;
      }
      continue;
    }
    if (in_yaml) out.back().text += line + "\n";
  }
  return out;
}

// Runs every command quoted in `markdown` as the README's test always has: in a scratch folder
// that sees the source tree's folders, `$ cat FILE` writing the lines shown after it to FILE. A
// command shown with "error:" lines must print exactly them and exit 2; any other must exit 0.
// Commands start with `hetsim` or `build/cli/hetsim`. Returns how many ran.
inline size_t run_quoted_commands(const std::filesystem::path& markdown) {
  namespace fs = std::filesystem;
  const std::string name = fs::relative(markdown, source_dir()).string();
  const fs::path dir = fs::temp_directory_path() / ("hetsim-md-test-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const char* folder : {"studies", "topologies", "workloads", "tests", "kernels_profile", "docs"}) {
    if (fs::exists(source_dir() / folder)) fs::create_directory_symlink(source_dir() / folder, dir / folder);
  }
  const auto quoted = [](const std::string& word) { return "'" + word + "'"; };
  size_t ran = 0;
  for (const QuotedCommand& q : quoted_commands(markdown)) {
    std::istringstream words(q.command);
    std::string first;
    words >> first;
    if (first == "cat") {
      std::string file;
      words >> file;
      std::ofstream(dir / file) << q.shown;
      continue;
    }
    EXPECT_TRUE(first == "hetsim" || first == "build/cli/hetsim") << name << ":" << q.line << ": " << q.command;
    if (first != "hetsim" && first != "build/cli/hetsim") continue;
    std::string rest((std::istreambuf_iterator<char>(words)), std::istreambuf_iterator<char>());
    const bool error_shown = q.shown.find(": error: ") != std::string::npos;
    const std::string cmd = "cd " + quoted(dir.string()) + " && " + hetsim_binary() + " -q " + rest + (error_shown ? " 2>&1 >/dev/null" : " 2>&1");
    const auto [rc, output] = run_shell(cmd);
    if (error_shown) {
      EXPECT_EQ(rc, 2) << name << ":" << q.line << ": " << q.command;
      EXPECT_EQ(output, q.shown) << name << ":" << q.line << ": " << q.command;
    } else {
      EXPECT_EQ(rc, 0) << name << ":" << q.line << ": " << q.command << "\n" << output;
    }
    ++ran;
  }
  fs::remove_all(dir);
  return ran;
}

}  // namespace hetsim::test
