// File: base/disk_cache.cpp
#include "base/disk_cache.hpp"

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
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

}  // namespace

DiskCache DiskCache::user(std::string_view kind) {
  std::string root = env("HETSIM_CACHE_DIR");
  if (root == "off" || build_id().empty()) return DiskCache();
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

DiskCache::DiskCache(const std::filesystem::path& root, std::string_view kind) {
  if (!build_id().empty()) dir_ = root / kind;
}

std::string DiskCache::full_key(std::string_view key) const {
  std::string k = "build " + build_id() + "\n";
  k.append(key);
  return k;
}

std::filesystem::path DiskCache::entry(const std::string& full) const { return dir_ / (digest(full) + ".entry"); }

std::optional<std::string> DiskCache::get(std::string_view key) const {
  if (!enabled()) return std::nullopt;
  const std::string full = full_key(key);
  const int fd = ::open(entry(full).c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return std::nullopt;
  struct stat st{};
  std::string text;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == ::geteuid() && st.st_size <= kMostEntryBytes) {
    text.resize(static_cast<size_t>(st.st_size));
    if (!read_all(fd, text.data(), text.size())) text.clear();
  }
  ::close(fd);
  // magic, the key's length, a newline, the key, then the value
  if (text.compare(0, kMagic.size(), kMagic) != 0) return std::nullopt;
  const std::string length = std::to_string(full.size()) + "\n";
  size_t at = kMagic.size();
  if (text.compare(at, length.size(), length) != 0) return std::nullopt;
  at += length.size();
  if (text.compare(at, full.size(), full) != 0) return std::nullopt;
  return text.substr(at + full.size());
}

bool DiskCache::put(std::string_view key, std::string_view value) const {
  if (!enabled()) return false;
  if (!make_dirs(dir_)) {
    note_once("cannot make the folder " + dir_.string() + " (" + std::strerror(errno) + ")");
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
  return true;
}

}  // namespace hetsim
