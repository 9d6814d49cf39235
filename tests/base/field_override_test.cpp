// File: tests/base/field_override_test.cpp
// --set overrides: paths into the YAML tree, [*], created leaves, and errors that name the --set.
#include "base/field_override.hpp"

#include <gtest/gtest.h>

#include "base/input_error.hpp"
#include "base/yaml_reader.hpp"

namespace hetsim {
namespace {

YAML::Node apply(const std::string& yaml, const std::vector<std::string>& sets, OverrideMarks* marks_out = nullptr) {
  YAML::Node root = YAML::Load(yaml);
  std::vector<FieldOverride> os;
  for (const std::string& s : sets) os.push_back(parse_override(s));
  OverrideMarks marks;
  apply_overrides(root, overrides_for(os, "cluster"), marks);
  if (marks_out != nullptr) *marks_out = marks;
  return root;
}

std::string error_of(const std::string& yaml, const std::string& set) {
  try {
    (void)apply(yaml, {set});
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

const char* kCluster = "name: c\nnode_types:\n  - {name: a, count: 2, nic: {bandwidth: 100Gbps}}\n"
                       "  - {name: b, count: 1, nic: {bandwidth: 200Gbps}}\n";

TEST(FieldOverride, IndexStarAndNewLeaf) {
  const YAML::Node one = apply(kCluster, {"cluster.node_types[1].nic.bandwidth=400Gbps"});
  EXPECT_EQ(one["node_types"][0]["nic"]["bandwidth"].as<std::string>(), "100Gbps");
  EXPECT_EQ(one["node_types"][1]["nic"]["bandwidth"].as<std::string>(), "400Gbps");
  const YAML::Node all = apply(kCluster, {"cluster.node_types[*].nic.bandwidth=400Gbps", "cluster.name=d"});
  EXPECT_EQ(all["node_types"][0]["nic"]["bandwidth"].as<std::string>(), "400Gbps");
  EXPECT_EQ(all["node_types"][1]["nic"]["bandwidth"].as<std::string>(), "400Gbps");
  EXPECT_EQ(all["name"].as<std::string>(), "d");
  // Later sets win; a missing last key is created (the input's reader judges it).
  const YAML::Node later = apply(kCluster, {"cluster.node_types[0].count=3", "cluster.node_types[*].count=5",
                                            "cluster.node_types[0].nic.latency=2us"});
  EXPECT_EQ(later["node_types"][0]["count"].as<int>(), 5);
  EXPECT_EQ(later["node_types"][0]["nic"]["latency"].as<std::string>(), "2us");
  // Values are YAML: lists and mappings too. Sets of the other input are left alone.
  const YAML::Node map = apply(kCluster, {"cluster.node_types[0].nic={count: 8, bandwidth: 1Gbps}", "model.layers=3"});
  EXPECT_EQ(map["node_types"][0]["nic"]["count"].as<int>(), 8);
}

TEST(FieldOverride, BadPathsNameTheSetAndSuggest) {
  EXPECT_EQ(error_of(kCluster, "cluster.node_typs[0].count=3"),
            "--set cluster.node_typs[0].count=3: error: no field \"node_typs\" in cluster; did you mean \"node_types\"?");
  EXPECT_EQ(error_of(kCluster, "cluster.node_types[2].count=3"),
            "--set cluster.node_types[2].count=3: error: cluster.node_types has 2 element(s): [2] is out of range");
  EXPECT_NE(error_of(kCluster, "cluster.name[0]=x").find("is not a list"), std::string::npos);
  EXPECT_NE(error_of(kCluster, "cluster.node_types.count=1").find("is not a mapping"), std::string::npos);
  EXPECT_NE(error_of(kCluster, "cluster.node_types[x].count=1").find("not a list index"), std::string::npos);
  EXPECT_NE(error_of(kCluster, "cluster.node_types[0.count=1").find("unclosed"), std::string::npos);
  EXPECT_NE(error_of(kCluster, "cluster.name=[1, 2").find("not valid YAML"), std::string::npos);
  EXPECT_THROW((void)parse_override("cluster.name"), InputError);
  EXPECT_THROW((void)parse_override("cluster.name="), InputError);
  EXPECT_THROW((void)parse_override("clusterr.name=x"), InputError);
}

TEST(FieldOverride, ReaderBlamesTheSetForWhatItWrote) {
  OverrideMarks marks;
  const YAML::Node root = apply(kCluster, {"cluster.node_types[0].nic.bandwith=1Gbps"}, &marks);
  auto m = std::make_shared<const OverrideMarks>(marks);
  Diagnostics d;
  FieldReader r(root, "", std::make_shared<const std::string>("c.yaml"), &d, m);
  (void)r.text("name");
  for (FieldReader& nt : r.list("node_types")) {
    (void)nt.text("name");
    (void)nt.integer("count", 1);
    FieldReader nic = nt.child("nic");
    (void)nic.quantity("bandwidth", Unit::kRate);
    nic.finish();
    nt.finish();
  }
  r.finish();
  try {
    d.throw_if_any();
    FAIL() << "expected an error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "--set cluster.node_types[0].nic.bandwith=1Gbps: error: node_types[0].nic: unknown key \"bandwith\"; did you "
              "mean \"bandwidth\"?");
  }
}

TEST(FieldOverride, AnErrorCutsAHugeValueToItsStartAndLength) {
  // Issue 35: a 120 KB value was repeated whole in its error message.
  // (Now over the cap of a --set: a 60 KB value, the largest kind accepted, shows the cut.)
  const std::string huge(60000, 'a');
  const std::string what = error_of(kCluster, "cluster.nics.bandwidth=" + huge);  // no such field
  EXPECT_EQ(what, "--set cluster.nics.bandwidth=" + huge.substr(0, 60) + "... (60000 characters): error: no field \"nics\" in cluster");
}

TEST(FieldOverride, ASetOverTheCapsIsRefusedWithItsSize) {
  // Issue 35: 20 000 list items took 1.4 GB and 40 000 ran out of 4 GiB.
  const std::string value(70000, '1');
  EXPECT_EQ(error_of(kCluster, "cluster.name=" + value),
            "--set cluster.name=" + value.substr(0, 47) + "... (70013 characters): error: has 70013 characters; a --set is at most "
            "65536 (edit a copy of the file for a larger change)");
  const std::string path = "cluster." + std::string(2000, 'k');
  EXPECT_EQ(error_of(kCluster, path + "=1"), "--set " + path.substr(0, 60) + "... (2010 characters): error: the field path has 2008 "
                                             "characters; at most 1024");
}

TEST(FieldOverride, ASetThatWouldWriteOverAMillionValuesThroughAStarIsRefused) {
  // Issue 35 audit: a value is copied into every place a [*] reaches: 1 000 items into each of
  // 2 000 node types is 2 002 000 values (a 64 KiB value into 10 000 types: ~140 GB).
  std::string cluster = "name: c\nnode_types:\n";
  for (int i = 0; i < 2000; ++i) cluster += "  - {name: t" + std::to_string(i) + "}\n";
  std::string items = "[1";
  for (int i = 1; i < 1000; ++i) items += ",1";
  items += "]";
  EXPECT_EQ(error_of(cluster, "cluster.node_types[*].nic=" + items),
            "--set cluster.node_types[*].nic=" + items.substr(0, 60) + "... (2001 characters): error: writes its 1001 value(s) into "
            "each of 2000 places, 2002000 in all; at most 1000000");
  EXPECT_EQ(error_of(cluster, "cluster.node_types[*].nic=[1, 2]"), "");  // 6 000 values: fine
}

TEST(FieldOverride, MarksHoldEachSetsTextOnceWhateverTheNodesItWrote) {
  // Issue 35: every node a --set wrote held its own copy of the --set's text, so a value of n items
  // under a long path took n times the text: 30 000 items under a 1000-character key, 36 MB.
  std::string items;
  for (int i = 0; i < 30000; ++i) items += i ? ",1" : "1";
  const std::string set = "cluster." + std::string(1000, 'k') + "=[" + items + "]";
  OverrideMarks marks;
  (void)apply(kCluster, {set}, &marks);
  EXPECT_EQ(marks.size(), 30001u);  // the list and its items
  EXPECT_LT(marks.text_bytes(), 2000u);
}

}  // namespace
}  // namespace hetsim
