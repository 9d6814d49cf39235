// File: base/disk_cache.cpp
#include "base/disk_cache.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>
#include <vector>

#include "base/build_id.hpp"
#include "base/digest.hpp"
#include "base/fd_io.hpp"
#include "base/log.hpp"

namespace hetsim {

namespace {

constexpr std::string_view kMagic = "hetsim cache 1\n";
constexpr off_t kMostEntryBytes = 1 << 24;  // an entry is a few kilobytes: anything larger is not one

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? std::string() : std::string(v);
}

// Makes `dir` and its missing parents, each new one mode 0700.
bool make_dirs(const std::filesystem::path& dir) {
  std::filesystem::path at;
  for (const auto& part : dir) {
    at /= part;
    if (::mkdir(at.c_str(), 0700) != 0 && errno != EEXIST) return false;
  }
  struct stat st{};
  return ::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

void note_once(const std::string& why) {
  static std::atomic<bool> noted{false};
  if (noted.exchange(true)) return;
  log_info("cache: " + why + "; results are computed again on every run");
}

// A folder only this user can change: a directory (a symlink to one where `follow`: the root a
// user may point elsewhere), owned by this user, writable by no group or other. Entries are read,
// written and pruned only in such a folder: another user's symlink or shared folder would have
// this run write into, or remove entries from, a folder the user never named.
bool private_dir(const std::filesystem::path& dir, bool follow) {
  struct stat st{};
  const int got = follow ? ::stat(dir.c_str(), &st) : ::lstat(dir.c_str(), &st);
  return got == 0 && S_ISDIR(st.st_mode) && st.st_uid == ::geteuid() && (st.st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

}  // namespace

DiskCache DiskCache::user(std::string_view kind) {
  std::string root = env("HETSIM_CACHE_DIR");
  if (root == "off" || build_id().empty()) return DiskCache();
  if (!root.empty() && root.front() != '/') {  // it would land wherever the run starts
    note_once("HETSIM_CACHE_DIR is not an absolute path (" + root + ")");
    return DiskCache();
  }
  if (root.empty()) {
    if (const std::string xdg = env("XDG_CACHE_HOME"); !xdg.empty() && xdg.front() == '/') {
      root = xdg + "/hetsim";
    } else if (const std::string home = env("HOME"); !home.empty()) {
      root = home + "/.cache/hetsim";
    } else {
      return DiskCache();
    }
  }
  return DiskCache(root, kind);
}

DiskCache::DiskCache(const std::filesystem::path& root, std::string_view kind, size_t most_entries)
    : most_entries_(std::max<size_t>(1, most_entries)) {
  if (!build_id().empty()) dir_ = root / kind;
}

std::string DiskCache::full_key(std::string_view key) const {
  std::string k = "build " + build_id() + "\n";
  k.append(key);
  return k;
}

std::filesystem::path DiskCache::entry(const std::string& full) const { return dir_ / (digest(full) + ".entry"); }

bool DiskCache::usable() const { return private_dir(dir_.parent_path(), true) && private_dir(dir_, false); }

std::optional<std::string> DiskCache::get(std::string_view key) const {
  if (!enabled() || !usable()) return std::nullopt;
  const std::string full = full_key(key);
  const int fd = ::open(entry(full).c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return std::nullopt;
  struct stat st{};
  std::string text;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == ::geteuid() && st.st_size <= kMostEntryBytes) {
    text.resize(static_cast<size_t>(st.st_size));
    if (!read_all(fd, text.data(), text.size())) text.clear();
  }
  // magic, the key's length, a newline, the key, then the value
  const std::string length = std::to_string(full.size()) + "\n";
  const size_t at = kMagic.size() + length.size();
  const bool hit = text.compare(0, kMagic.size(), kMagic) == 0 && text.compare(kMagic.size(), length.size(), length) == 0 &&
                   text.compare(at, full.size(), full) == 0;
  if (hit) (void)::futimens(fd, nullptr);  // used now: the last to be pruned
  ::close(fd);
  if (!hit) return std::nullopt;
  return text.substr(at + full.size());
}

void DiskCache::prune() const {
  struct Entry {
    std::filesystem::path path;
    struct timespec used;
  };
  std::vector<Entry> entries;
  const time_t now = ::time(nullptr);
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
    const std::filesystem::path& p = it->path();
    const std::string name = p.filename().string();
    const bool entry = p.extension() == ".entry", temporary = name.rfind(".new-", 0) == 0;
    struct stat st{};
    if ((!entry && !temporary) || ::lstat(p.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid()) continue;
    if (temporary) {
      if (now - st.st_mtim.tv_sec > 3600) ::unlink(p.c_str());  // a killed run's
      continue;
    }
    entries.push_back({p, st.st_mtim});
  }
  if (entries.size() <= most_entries_) return;
  // Oldest first; ties by name, so that runs at once remove the same ones.
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    if (a.used.tv_sec != b.used.tv_sec) return a.used.tv_sec < b.used.tv_sec;
    if (a.used.tv_nsec != b.used.tv_nsec) return a.used.tv_nsec < b.used.tv_nsec;
    return a.path < b.path;
  });
  for (size_t i = 0; i + most_entries_ < entries.size(); ++i) ::unlink(entries[i].path.c_str());
}

bool DiskCache::put(std::string_view key, std::string_view value) const {
  if (!enabled()) return false;
  if (!make_dirs(dir_)) {
    note_once("cannot make the folder " + dir_.string() + " (" + std::strerror(errno) + ")");
    return false;
  }
  if (!usable()) {
    note_once("the folder " + dir_.string() + " or its parent is a symlink, not this user's, or writable by others: not used");
    return false;
  }
  const std::string full = full_key(key);
  std::string text(kMagic);
  text += std::to_string(full.size()) + "\n" + full;
  text.append(value);
  std::string pattern = (dir_ / ".new-XXXXXX").string();
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  const int fd = ::mkstemp(name.data());
  if (fd < 0) {
    note_once("cannot write in " + dir_.string() + " (" + std::strerror(errno) + ")");
    return false;
  }
  const bool written = write_all(fd, text.data(), text.size());
  const int err = errno;
  const bool closed = ::close(fd) == 0;
  if (!written || !closed || ::rename(name.data(), entry(full).c_str()) != 0) {
    const int why = !written ? err : errno;
    ::unlink(name.data());
    note_once("cannot write in " + dir_.string() + " (" + std::strerror(why) + ")");
    return false;
  }
  prune();
  return true;
}

}  // namespace hetsim
