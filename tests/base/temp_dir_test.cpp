// File: tests/base/temp_dir_test.cpp
// TempDir: a private folder per use under $TMPDIR, files made in it exclusively, all removed.
#include "base/temp_dir.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>

#include "base/input_error.hpp"
#include "test_support.hpp"

namespace hetsim {
namespace {

namespace fs = std::filesystem;

mode_t mode_of(const fs::path& p) {
  struct stat st {};
  EXPECT_EQ(::lstat(p.c_str(), &st), 0) << p;
  return st.st_mode & 0777;
}

TEST(TempDir, IsPrivateUnderTmpdirAndGoesWithItsFiles) {
  const fs::path root = fs::temp_directory_path() / ("hetsim-tempdir-test-" + std::to_string(::getpid()));
  fs::create_directories(root);
  const test::ScopedEnv env("TMPDIR", root.string());
  fs::path dir, a, b;
  {
    const TempDir t("unit");
    dir = t.path();
    EXPECT_EQ(dir.parent_path(), root);
    EXPECT_EQ(dir.filename().string().rfind("hetsim-unit-", 0), 0u) << dir;
    EXPECT_EQ(mode_of(dir), 0700u);  // nobody else can plant anything in it
    a = t.new_file("report", ".json", "{}\n");
    b = t.new_file("report", ".json");
    EXPECT_NE(a, b);  // the same stem twice: two files
    EXPECT_EQ(a.parent_path(), dir);
    EXPECT_EQ(a.extension(), ".json");
    EXPECT_EQ(mode_of(a), 0600u);
    std::ostringstream text;
    text << std::ifstream(a).rdbuf();
    EXPECT_EQ(text.str(), "{}\n");
    EXPECT_EQ(fs::file_size(b), 0u);
  }
  EXPECT_FALSE(fs::exists(dir));
  EXPECT_TRUE(fs::is_empty(root));
  fs::remove_all(root);
}

TEST(TempDir, AMissingOrUnwritableTmpdirIsAnInputErrorNamingIt) {
  const test::ScopedEnv env("TMPDIR", "/nonexistent-hetsim-tmpdir");
  try {
    const TempDir t("unit");
    FAIL() << "made " << t.path();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "TMPDIR=/nonexistent-hetsim-tmpdir: error: cannot make a temporary folder here: No such file or directory; "
              "set TMPDIR to a writable folder");
  }
}

}  // namespace
}  // namespace hetsim
