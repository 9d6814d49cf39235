// File: tests/base/diagnostics_test.cpp
// Diagnostics: every problem counted, only the ones shown kept (issue 35 audit: a 4 MB file of two
// million bad values held two million messages, 5.6 GB).
#include "base/input_error.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cstdio>
#include <filesystem>
#include <string>

namespace hetsim {
namespace {

Diagnostic problem(int i) {
  std::string field("k");
  field.append(std::to_string(i));
  return Diagnostic{"f.yaml", i + 1, 3, field, std::string("a message of some length, as real ones are: ").append(200, 'x')};
}

TEST(Diagnostics, AMillionProblemsAreCountedAndFiftyShownWithTheNextOnesPlace) {
  Diagnostics d;
  for (int i = 0; i < 1000000; ++i) d.add(problem(i));
  EXPECT_EQ(d.size(), 1000000u);
  try {
    d.throw_if_any();
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    ASSERT_EQ(e.diagnostics().size(), 51u);
    EXPECT_EQ(e.diagnostics().back().str(), "f.yaml:51:3: error: and 999950 more problem(s) not shown, the first of them here; fix these first");
  }
}

// Run by the next test in a process of its own (a fresh one: a fork would reuse memory its parent
// freed, and its peak would not grow): adds two million problems, prints how much the peak grew.
TEST(Diagnostics, DISABLED_AddTwoMillionAndPrintTheGrowth) {
  rusage before{}, after{};
  ::getrusage(RUSAGE_SELF, &before);
  {
    Diagnostics d;
    for (int i = 0; i < 2000000; ++i) d.add(problem(i));
    ::getrusage(RUSAGE_SELF, &after);
  }
  std::printf("grew_kib=%ld\n", after.ru_maxrss - before.ru_maxrss);
}

TEST(Diagnostics, HoldOnlyWhatTheyShow) {
  // Two million problems of ~300 bytes held whole would take over 600 MB.
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();  // (in popen's shell, /proc/self is the shell)
  FILE* p = ::popen(("'" + self + "' --gtest_also_run_disabled_tests --gtest_filter=Diagnostics.DISABLED_AddTwoMillionAndPrintTheGrowth").c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  ::pclose(p);
  const size_t at = out.find("grew_kib=");
  ASSERT_NE(at, std::string::npos) << out;
  EXPECT_LT(std::stol(out.substr(at + 9)), 50 * 1024) << "KiB";
}

TEST(InputErrorRelocated, AProblemSaidOfAKeyIsSaidWhereTheValueCameFromAndKeepsItsMachineLimit) {
  InputError keyed("training.global_batch", "", "needs more tasks than this machine can hold");
  keyed.set_machine_limit();
  const std::optional<InputError> moved = keyed.relocated("training.global_batch", Diagnostic{"runs.yaml", 6, 17, "[0].global_batch", ""}, "so: ");
  ASSERT_TRUE(moved.has_value());
  EXPECT_STREQ(moved->what(), "runs.yaml:6:17: error: [0].global_batch: so: needs more tasks than this machine can hold");
  EXPECT_TRUE(moved->machine_limit());
  // Another key, a problem at a place in a file, or several problems: left as they are.
  EXPECT_FALSE(keyed.relocated("training.micro_batch", Diagnostic{}).has_value());
  EXPECT_FALSE(InputError({Diagnostic{"training.global_batch", 3, 1, "", "m"}}).relocated("training.global_batch", Diagnostic{}).has_value());
  EXPECT_FALSE(InputError({Diagnostic{"training.global_batch", 0, 0, "", "a"}, Diagnostic{"training.global_batch", 0, 0, "", "b"}})
                   .relocated("training.global_batch", Diagnostic{})
                   .has_value());
}

}  // namespace
}  // namespace hetsim
