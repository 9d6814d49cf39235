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
    EXPECT_EQ(std::string(e.what()),
              "nodes: error: \"4\" is not a node index of this cluster: it has 4 nodes (0 to 3); write e.g. \"0-7,16\"");
  }
  EXPECT_THROW((void)parse_index_list("0-3,2", 4, "node", "nodes"), InputError);
}

TEST(DeviceList, ANegativeIndexAndEmptyEntriesAreSaidAsWritten) {
  // "-1" reads as a range with nothing before its dash: the message quotes it whole, not "".
  const auto message = [](const std::string& spec) {
    try {
      (void)parse_index_list(spec, 16, "GPU", "--group");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message("-1"), "--group: error: \"-1\" is not a GPU index or range of this cluster: it has 16 GPUs (0 to 15); write e.g. \"0-7,16\"");
  for (const std::string spec : {"0,1,", "0,,1", ",0"}) {
    EXPECT_EQ(message(spec), "--group: error: \"" + spec + "\" has an empty entry (two commas in a row, or one at an end); write e.g. \"0-7,16\"");
  }
}

}  // namespace
}  // namespace hetsim
