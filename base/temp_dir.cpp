// File: base/temp_dir.cpp
#include "base/temp_dir.hpp"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>
#include <vector>

#include "base/fd_io.hpp"
#include "base/input_error.hpp"

namespace hetsim {
namespace {

// Where temporary folders go: $TMPDIR when set and not empty (as POSIX says), else /tmp.
std::string temp_root(bool& from_env) {
  const char* env = std::getenv("TMPDIR");
  from_env = env != nullptr && *env != '\0';
  return from_env ? std::string(env) : std::string("/tmp");
}

}  // namespace

TempDir::TempDir(const std::string& purpose) {
  bool from_env = false;
  const std::string root = temp_root(from_env);
  std::string pattern = root + (root.back() == '/' ? "" : "/") + "hetsim-" + purpose + "-XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr) {
    const int err = errno;
    throw InputError(from_env ? "TMPDIR=" + root : root, "",
                     std::string("cannot make a temporary folder here: ") + std::strerror(err) +
                         (from_env ? "; set TMPDIR to a writable folder" : "; set TMPDIR to a writable folder (/tmp is used when TMPDIR is not set)"));
  }
  path_ = buf.data();
  owner_ = ::getpid();
}

TempDir::~TempDir() {
  if (path_.empty() || ::getpid() != owner_) return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);  // removes links, never what they point at
}

std::filesystem::path TempDir::new_file(const std::string& stem, const std::string& suffix, std::string_view text) const {
  std::string pattern = (path_ / (stem + "-XXXXXX" + suffix)).string();
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  const int fd = ::mkstemps(buf.data(), static_cast<int>(suffix.size()));
  if (fd < 0) {
    const int err = errno;
    throw InputError(path_.string(), "", std::string("cannot make a temporary file here: ") + std::strerror(err));
  }
  const bool written = write_all(fd, text.data(), text.size());
  const int err = errno;
  if (::close(fd) != 0 || !written) {
    throw InputError(buf.data(), "", std::string("cannot write this temporary file: ") + std::strerror(written ? errno : err));
  }
  return buf.data();
}

}  // namespace hetsim
