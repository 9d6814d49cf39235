// File: tests/base/device_list_test.cpp
// Index lists ("0-7,16") read and written back.
#include "base/device_list.hpp"

#include <gtest/gtest.h>

#include "base/input_error.hpp"

namespace hetsim {
namespace {

TEST(DeviceList, FormatIsTheInverseOfParse) {
  EXPECT_EQ(format_index_list({8, 0, 1, 2, 3, 3}), "0-3,8");
  EXPECT_EQ(format_index_list({5}), "5");
  EXPECT_EQ(format_index_list({}), "");
  EXPECT_EQ(parse_index_list(format_index_list({1, 3, 4, 5, 9}), 10, "node", "x"), (std::vector<int>{1, 3, 4, 5, 9}));
}

TEST(DeviceList, MessagesNameTheNounAndTheCount) {
  try {
    (void)parse_index_list("0-4", 4, "node", "nodes");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "nodes: error: \"4\" is not a node index of this cluster: it has 4 nodes (0 to 3); write e.g. \"0-7,16\"");
  }
  EXPECT_THROW((void)parse_index_list("0-3,2", 4, "node", "nodes"), InputError);
}

}  // namespace
}  // namespace hetsim
