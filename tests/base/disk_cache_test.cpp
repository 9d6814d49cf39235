// File: tests/base/disk_cache_test.cpp
// DiskCache: entries keyed by their whole key and the code's build ID, written whole or not at all,
// read only when they are this user's regular files and hold exactly the key asked for; a cache
// that cannot be used is never an error.
#include "base/disk_cache.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fcntl.h>

#include <fstream>
#include <map>
#include <sstream>
#include <thread>
#include <vector>

#include "base/build_id.hpp"
#include "base/temp_dir.hpp"
#include "test_support.hpp"

namespace hetsim {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> entries(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path());
  return out;
}

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(BuildId, NamesTheRunningCode) {
  // The linker's note (Debian's GCC links with --build-id: SHA-1, 20 bytes; md5 or uuid: 16), in hex.
  ASSERT_GE(build_id().size(), 32U);
  EXPECT_EQ(build_id().size() % 2, 0U);
  EXPECT_EQ(build_id().find_first_not_of("0123456789abcdef"), std::string::npos);
}

TEST(DiskCache, GivesBackExactlyWhatWasStoredUnderTheSameKey) {
  const TempDir tmp("cache-test");
  const DiskCache cache(tmp.path(), "things");
  ASSERT_TRUE(cache.enabled());
  EXPECT_FALSE(cache.get("a key").has_value());
  ASSERT_TRUE(cache.put("a key", std::string("value\n\0with a nul", 17)));
  EXPECT_EQ(cache.get("a key"), std::string("value\n\0with a nul", 17));
  EXPECT_FALSE(cache.get("a key ").has_value());
  EXPECT_FALSE(cache.get("another key").has_value());
  ASSERT_TRUE(cache.put("a key", "replaced"));
  EXPECT_EQ(cache.get("a key"), "replaced");
  // One entry, no temporary file left, in a folder only this user can enter.
  EXPECT_EQ(entries(tmp.path() / "things").size(), 1U);
  struct stat st {};
  ASSERT_EQ(::stat((tmp.path() / "things").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700U);
}

TEST(DiskCache, AnEntryThatIsNotWholeOrNotTheKeysOrNotAPlainFileOfThisUserIsAMiss) {
  const TempDir tmp("cache-test");
  const DiskCache cache(tmp.path(), "things");
  ASSERT_TRUE(cache.put("the key", "the value"));
  const fs::path entry = entries(tmp.path() / "things").front();
  const std::string whole = read(entry);
  auto rewrite = [&](const std::string& text) {
    fs::remove(entry);
    std::ofstream(entry, std::ios::binary) << text;
  };
  // Another key in the file (a digest collision, or a planted file): compared byte for byte.
  std::string other = whole;
  other[other.find("the key")] = 'T';
  rewrite(other);
  EXPECT_FALSE(cache.get("the key").has_value());
  rewrite(whole.substr(0, whole.find("the key") + 3));  // cut inside the key
  EXPECT_FALSE(cache.get("the key").has_value());
  rewrite("");
  EXPECT_FALSE(cache.get("the key").has_value());
  rewrite("not a cache entry at all");
  EXPECT_FALSE(cache.get("the key").has_value());
  rewrite(whole);
  EXPECT_EQ(cache.get("the key"), "the value");
  // A link to a whole entry is not followed; a folder in its place is no entry.
  const fs::path elsewhere = tmp.path() / "elsewhere";
  fs::rename(entry, elsewhere);
  fs::create_symlink(elsewhere, entry);
  EXPECT_FALSE(cache.get("the key").has_value());
  fs::remove(entry);
  fs::create_directory(entry);
  EXPECT_FALSE(cache.get("the key").has_value());
  // A file of another user is not read (only root can make one here).
  fs::remove(entry);
  fs::rename(elsewhere, entry);
  if (::geteuid() == 0) {
    ASSERT_EQ(::chown(entry.c_str(), 12345, 12345), 0);
    EXPECT_FALSE(cache.get("the key").has_value());
  }
}

TEST(DiskCache, AFolderThatCannotBeMadeOrWrittenIsNoErrorAndKeepsNothing) {
  const TempDir tmp("cache-test");
  const fs::path file = tmp.new_file("not-a-folder", "");
  const DiskCache under_a_file(file, "things");
  EXPECT_FALSE(under_a_file.put("k", "v"));
  EXPECT_FALSE(under_a_file.get("k").has_value());
  const DiskCache under_dev_null("/dev/null", "things");
  EXPECT_FALSE(under_dev_null.put("k", "v"));
}

TEST(DiskCache, AKindsFolderThatIsALinkOrThatOthersCanChangeIsNeitherWrittenNorRead) {
  // Another user's link at the kind's folder would have entries written into, and pruned from, a
  // folder nobody named: the cache keeps nothing there, and reads nothing through it.
  const TempDir tmp("cache-test");
  const fs::path target = tmp.path() / "elsewhere";
  fs::create_directories(target);
  fs::create_directories(tmp.path() / "root");
  fs::create_symlink(target, tmp.path() / "root" / "things");
  const DiskCache linked(tmp.path() / "root", "things");
  EXPECT_FALSE(linked.put("k", "v"));
  EXPECT_TRUE(entries(target).empty());
  // A folder others may write in: not used either; made private, it is.
  fs::create_directories(tmp.path() / "shared" / "things");
  fs::permissions(tmp.path() / "shared" / "things", fs::perms::all);
  const DiskCache shared(tmp.path() / "shared", "things");
  EXPECT_FALSE(shared.put("k", "v"));
  fs::permissions(tmp.path() / "shared" / "things", fs::perms::owner_all);
  EXPECT_TRUE(shared.put("k", "v"));
  EXPECT_EQ(shared.get("k").value_or(""), "v");
  fs::permissions(tmp.path() / "shared" / "things", fs::perms::all);
  EXPECT_FALSE(shared.get("k").has_value());
  // The root may be a link to the user's own folder (a cache on another disk).
  fs::create_directories(tmp.path() / "disk");
  fs::create_symlink(tmp.path() / "disk", tmp.path() / "root-link");
  const DiskCache via_link(tmp.path() / "root-link", "things");
  EXPECT_TRUE(via_link.put("k", "v"));
  EXPECT_EQ(via_link.get("k").value_or(""), "v");
  // A relative HETSIM_CACHE_DIR would land wherever the run starts: off.
  const test::ScopedEnv env("HETSIM_CACHE_DIR", "relative-cache");
  EXPECT_FALSE(DiskCache::user("upper-bound").enabled());
}

TEST(DiskCache, TheUsersFolderComesFromTheEnvironmentAndOffKeepsNothing) {
  {
    const test::ScopedEnv env("HETSIM_CACHE_DIR", "off");
    const DiskCache c = DiskCache::user("upper-bound");
    EXPECT_FALSE(c.enabled());
    EXPECT_FALSE(c.put("k", "v"));
  }
  {
    const test::ScopedEnv env("HETSIM_CACHE_DIR", "/some/where");
    EXPECT_EQ(DiskCache::user("upper-bound").dir(), fs::path("/some/where/upper-bound"));
  }
  {
    const test::ScopedEnv env("HETSIM_CACHE_DIR", "");
    const test::ScopedEnv xdg("XDG_CACHE_HOME", "/xdg");
    EXPECT_EQ(DiskCache::user("upper-bound").dir(), fs::path("/xdg/hetsim/upper-bound"));
  }
  {
    const test::ScopedEnv env("HETSIM_CACHE_DIR", "");
    const test::ScopedEnv xdg("XDG_CACHE_HOME", "relative");  // not absolute: ignored, as the XDG rules say
    const test::ScopedEnv home("HOME", "/home/someone");
    EXPECT_EQ(DiskCache::user("upper-bound").dir(), fs::path("/home/someone/.cache/hetsim/upper-bound"));
  }
}

// Sets the modification time of `p` to `seconds` after the epoch.
void set_time(const fs::path& p, time_t seconds) {
  const struct timespec t[2] = {{seconds, 0}, {seconds, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, p.c_str(), t, 0), 0);
}

TEST(DiskCache, TheLeastRecentlyUsedEntriesGoBeyondTheLimitAndStaleTemporaryFilesWithThem) {
  const TempDir tmp("cache-prune");
  const DiskCache cache(tmp.path(), "things", /*most_entries=*/3);
  const fs::path dir = tmp.path() / "things";
  std::map<std::string, fs::path> file;  // by key
  for (int i = 0; i < 3; ++i) {
    const std::string key = "key " + std::to_string(i);
    ASSERT_TRUE(cache.put(key, "value"));
    for (const fs::path& p : entries(dir)) {
      bool known = false;
      for (const auto& [k, f] : file) known = known || f == p;
      if (!known) file[key] = p;
    }
    set_time(file[key], 1000 + i);  // written in this order, seconds apart
  }
  ASSERT_EQ(file.size(), 3U);
  EXPECT_TRUE(cache.get("key 0").has_value());  // the oldest written, now the last used
  const fs::path stale = dir / ".new-stale1", fresh = dir / ".new-fresh1";
  std::ofstream(stale) << "a killed run's";
  std::ofstream(fresh) << "a run's at work";
  set_time(stale, ::time(nullptr) - 7200);
  ASSERT_TRUE(cache.put("key 3", "value"));
  EXPECT_TRUE(fs::exists(file["key 0"]));
  EXPECT_FALSE(fs::exists(file["key 1"]));  // the least recently used
  EXPECT_TRUE(fs::exists(file["key 2"]));
  EXPECT_FALSE(cache.get("key 1").has_value());
  EXPECT_TRUE(cache.get("key 3").has_value());
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(fresh));
  EXPECT_EQ(entries(dir).size(), 4U);  // three entries and the fresh temporary file
}

TEST(DiskCache, WritersAndReadersAtOnceSeeAWholeEntryOrNone) {
  const TempDir tmp("cache-test");
  const DiskCache cache(tmp.path(), "things");
  const std::string value(100000, 'x');  // long enough that a torn write would show
  std::vector<std::thread> threads;
  std::vector<int> bad(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 100; ++i) {
        if (t % 2 == 0) {
          (void)cache.put("shared", value);
        } else if (const std::optional<std::string> got = cache.get("shared"); got && *got != value) {
          ++bad[static_cast<size_t>(t)];
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int b : bad) EXPECT_EQ(b, 0);
  EXPECT_EQ(cache.get("shared"), value);
  EXPECT_EQ(entries(tmp.path() / "things").size(), 1U);
}

}  // namespace
}  // namespace hetsim
