// File: tests/base/yaml_tree_test.cpp
#include "base/yaml_tree.hpp"

#include <gtest/gtest.h>

#include <string>

namespace hetsim {
namespace {

std::vector<Diagnostic> problems(const std::string& yaml) {
  return yaml_tree_problems(YAML::Load(yaml), "x.yaml", yaml.size());
}

TEST(YamlTree, AcceptsAliasesThatFormATree) {
  // The same anchor used twice, and an alias inside another anchored value: a tree once expanded.
  EXPECT_TRUE(problems("nic: &n {bandwidth: 100Gbps}\na: *n\nb: [*n, *n]\nc: &c {x: *n}\nd: *c\n").empty());
}

TEST(YamlTree, RefusesAnAliasInsideItsOwnValue) {
  for (const char* yaml : {"a: &x [*x]\n", "a: &x {b: *x}\n", "a: &x {b: [1, {c: *x}]}\n"}) {
    const std::vector<Diagnostic> d = problems(yaml);
    ASSERT_EQ(d.size(), 1u) << yaml;
    EXPECT_NE(d[0].message.find("refers to a value that contains it"), std::string::npos) << yaml;
  }
}

TEST(YamlTree, RefusesADocumentThatExpandsBeyondTheLimit) {
  // a3 expands to 10^4 leaves; ten of it more make 10^5 leaves besides the rest: over the limit.
  std::string yaml = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i <= 3; ++i) {
    const std::string name = std::to_string(i), previous = std::to_string(i - 1);
    yaml.append("a").append(name).append(": &a").append(name).append(" [");
    for (int k = 0; k < 10; ++k) yaml.append(k ? ", *a" : "*a").append(previous);
    yaml.append("]\n");
  }
  EXPECT_TRUE(problems(yaml).empty());  // about 12 300 values
  yaml += "a4: [*a3, *a3, *a3, *a3, *a3, *a3, *a3, *a3, *a3, *a3]\n";
  const std::vector<Diagnostic> d = problems(yaml);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_NE(d[0].message.find("more than 100000 values"), std::string::npos);
}

TEST(YamlTree, LimitsDepth) {
  const int deep = kMaxYamlDepth + 1;
  EXPECT_TRUE(problems(std::string(deep - 1, '[') + std::string(deep - 1, ']')).empty());
  const std::vector<Diagnostic> d = problems(std::string(deep + 1, '[') + std::string(deep + 1, ']'));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_NE(d[0].message.find("levels deep"), std::string::npos);
}

TEST(YamlTree, ReportsEveryDuplicateKeyAndComplexKeys) {
  const std::vector<Diagnostic> d = problems("a: 1\nb: {c: 1, c: 2}\na: 3\n? [x]\n: 4\n");
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0].field, "b.c");
  EXPECT_EQ(d[0].line, 2);
  EXPECT_EQ(d[1].field, "a");
  EXPECT_EQ(d[1].message, "written twice (first on line 1); keep one");
  EXPECT_EQ(d[2].message, "a key must be a plain name, not a list or a mapping");
}

}  // namespace
}  // namespace hetsim
