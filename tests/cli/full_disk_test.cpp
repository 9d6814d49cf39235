// File: tests/cli/full_disk_test.cpp
// Every write is checked: a table, report, plan or figure that did not reach its file (here
// /dev/full, where every write fails with ENOSPC) is an error naming the file, never a success.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "test_support.hpp"

namespace hetsim {
namespace {

namespace fs = std::filesystem;

bool has_dev_full() { return fs::exists("/dev/full"); }

fs::path small_db() {
  const fs::path db = fs::temp_directory_path() / ("hetsim-full-disk-test-" + std::to_string(::getpid()) + ".db");
  fs::remove(db);
  test::write_small_results_db(db);
  return db;
}

TEST(FullDisk, AReportOnAFullStandardOutputFailsNamingIt) {
  if (!has_dev_full()) GTEST_SKIP() << "no /dev/full";
  const fs::path db = small_db();
  for (const char* format : {"--csv", "--markdown", ""}) {
    const test::CliRun r = test::run_hetsim_redirected("report " + db.string() + " " + format + " 2>&1 >/dev/full");
    EXPECT_EQ(r.rc, 2) << format << ": " << r.output;
    EXPECT_EQ(r.output, "<stdout>: error: cannot write the standard output: No space left on device\n") << format;
  }
  fs::remove(db);
}

TEST(FullDisk, APlotOrReportFileOnAFullDiskFailsNamingIt) {
  if (!has_dev_full()) GTEST_SKIP() << "no /dev/full";
  const fs::path db = small_db();
  const bool matplotlib = std::system("/usr/bin/python3 -c 'import matplotlib' 2>/dev/null || python3 -c 'import matplotlib' 2>/dev/null") == 0;
  if (matplotlib) {
    const test::CliRun plot = test::run_hetsim("report " + db.string() + " --plot /dev/full", test::Capture::kStderr);
    EXPECT_EQ(plot.rc, 2) << plot.output;
    EXPECT_EQ(plot.output, "/dev/full: error: --plot: cannot write this file: No space left on device\n");
    const test::CliRun out = test::run_hetsim("report " + db.string() + " --plot /dev/full", test::Capture::kStdout);
    EXPECT_EQ(out.output.find("wrote"), std::string::npos) << out.output;
  }
  const test::CliRun sim =
      test::run_hetsim("simulate -c a100-v100-2x2 -m gpt3-1.3b --strategy dp-even --report /dev/full", test::Capture::kStderr);
  EXPECT_EQ(sim.rc, 2) << sim.output;
  EXPECT_EQ(sim.output, "/dev/full: error: --report: cannot write this file: No space left on device\n");
  fs::remove(db);
}

}  // namespace
}  // namespace hetsim
