// File: tests/base/yaml_reader_test.cpp
#include "base/yaml_reader.hpp"

#include "base/text.hpp"

#include <gtest/gtest.h>

#include <memory>

namespace hetsim {
namespace {

FieldReader reader(const std::string& yaml, Diagnostics& d) {
  return FieldReader(YAML::Load(yaml), "", std::make_shared<const std::string>("x.yaml"), &d);
}

TEST(EditDistance, SuggestsNearKeysOnly) {
  EXPECT_EQ(edit_distance("gpus_per_nodes", "gpus_per_node"), 1u);
  EXPECT_EQ(nearest("gpus_per_nodes", {"count", "gpus_per_node", "gpu"}), "gpus_per_node");
  EXPECT_EQ(nearest("zzzzzz", {"count", "gpu"}), "");
  EXPECT_EQ(nearest("EAGER", {"fused", "eager"}), "eager");  // the same name in other letter case
  EXPECT_EQ(nearest("h100-sxm5-80gb", {"B200", "H100-SXM5-80GB"}), "H100-SXM5-80GB");
  // A word that starts a name means it, not a name two letters away.
  EXPECT_EQ(nearest("H100", {"B200", "H100-SXM5-80GB", "H200-SXM-141GB"}), "H100-SXM5-80GB");
  EXPECT_EQ(nearest("A100", {"A100-SXM4-40GB", "A100-SXM4-80GB", "B200"}), "A100-SXM4-40GB");
}

TEST(FieldReader, ReportsEveryProblemAtOnce) {
  Diagnostics d;
  FieldReader r = reader("a: 5\nb: fast\ncoutn: 3\n", d);
  (void)r.integer("a", 10);
  (void)r.quantity("b", Unit::kTime);
  (void)r.integer("count", 1);
  r.finish();
  ASSERT_EQ(d.size(), 4u);
  try {
    d.throw_if_any();
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "x.yaml:1:4: error: a: 5 is out of range; expected at least 10\n"
              "x.yaml:2:4: error: b: \"fast\" is not a time; write e.g. \"1.5us\"\n"
              "x.yaml:1:1: error: count: missing required field\n"
              "x.yaml:3:1: error: unknown key \"coutn\"; did you mean \"count\"?");
  }
}

TEST(FieldReader, NestedPathsAndChoices) {
  Diagnostics d;
  FieldReader r = reader("net:\n  topology: fat-tre\n", d);
  FieldReader net = r.child("net");
  EXPECT_EQ(net.opt_choice("topology", {"single-switch", "fat-tree"}), std::nullopt);
  ASSERT_EQ(d.size(), 1u);
  try {
    d.throw_if_any();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "x.yaml:2:13: error: net.topology: \"fat-tre\" is not one of: single-switch, fat-tree; did you mean "
              "\"fat-tree\"?");
  }
}

TEST(FieldReader, OptionalListIsAbsentOrCheckedLikeARequiredOne) {
  Diagnostics d;
  FieldReader r = reader("mult: [1, 2, 4]\nempty: []\n", d);
  EXPECT_EQ(r.opt_numbers("absent", 1, 8), std::nullopt);
  EXPECT_EQ(r.opt_numbers("mult", 1, 8), (std::vector<double>{1, 2, 4}));
  EXPECT_EQ(r.opt_numbers("empty", 1, 8), std::vector<double>{});
  r.finish();
  ASSERT_EQ(d.size(), 1u);
  try {
    d.throw_if_any();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "x.yaml:2:8: error: empty: expected a non-empty list of numbers");
  }
}

TEST(FieldReader, WholeNumbersMayBeWrittenWithAnExponent) {
  // "global_batch: 1e9" was "not a whole number"; 2.5e0 still is, and 1e19 is out of range (as a
  // double first: no cast overflows).
  Diagnostics d;
  FieldReader r = reader("a: 1e9\nb: 2.5e0\nc: 1e19\nd: 9.3e18\n", d);
  EXPECT_EQ(r.integer("a", 1), 1000000000L);
  (void)r.integer("b", 1);
  (void)r.integer("c", 1, 1000000000000L);
  (void)r.integer("d", 1);
  r.finish();
  try {
    d.throw_if_any();
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "x.yaml:2:4: error: b: \"2.5e0\" is not a whole number\n"
              "x.yaml:3:4: error: c: 1e19 is out of range; expected 1 to 1000000000000\n"
              "x.yaml:4:4: error: d: 9.3e18 is out of range; expected 1 to 9223372036854775807");
  }
}

TEST(FieldReader, ValidInputHasNoDiagnostics) {
  Diagnostics d;
  FieldReader r = reader("size: 80GiB\nn: 3\nflag: true\nratio: 0.5\n", d);
  EXPECT_DOUBLE_EQ(r.quantity("size", Unit::kBytes), 80.0 * (1 << 30));
  EXPECT_EQ(r.integer("n", 1), 3);
  EXPECT_EQ(r.opt_flag("flag"), true);
  EXPECT_DOUBLE_EQ(r.number("ratio", 0, 1), 0.5);
  r.finish();
  EXPECT_TRUE(d.empty());
}

}  // namespace
}  // namespace hetsim
