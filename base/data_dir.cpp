// File: base/data_dir.cpp
#include "base/data_dir.hpp"

#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>

#include "base/input_error.hpp"
#include "base/text.hpp"

#ifndef HETSIM_SOURCE_DIR
#error "HETSIM_SOURCE_DIR must be defined by the build"
#endif

namespace hetsim {

std::filesystem::path install_prefix() {
  // An installed hetsim (cmake --install, the .deb): PREFIX/share/hetsim beside the file that holds
  // this code: the binary, PREFIX/bin/hetsim, or the Python module, PREFIX/lib/python3/dist-packages/hetsim*.so.
  static const std::filesystem::path prefix = [] {
    std::error_code ec;
    const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    // The Python module is a shared object (hetsim.cpython-*.so) loaded into python3; for the binary,
    // dladdr gives the name it was started by, so /proc/self/exe is the one to trust.
    Dl_info info{};
    const bool module = dladdr(reinterpret_cast<const void*>(&install_prefix), &info) != 0 && info.dli_fname != nullptr &&
                        std::filesystem::path(info.dli_fname).extension() == ".so";
    const std::filesystem::path self = module ? std::filesystem::weakly_canonical(info.dli_fname, ec) : exe;
    if (self.empty()) return std::filesystem::path();
    const std::filesystem::path p = module ? self.parent_path().parent_path().parent_path().parent_path() : self.parent_path().parent_path();
    return std::filesystem::is_directory(p / "share" / "hetsim" / "kernels_profile" / "devices", ec) ? p : std::filesystem::path();
  }();
  return prefix;
}

std::filesystem::path data_root() {
  if (const char* env = std::getenv("HETSIM_DATA_DIR"); env != nullptr && *env != '\0') {
    std::error_code ec;  // a mistyped folder would otherwise be a cluster of no shipped inputs
    if (!std::filesystem::is_directory(std::filesystem::path(env) / "kernels_profile" / "devices", ec)) {
      throw InputError("HETSIM_DATA_DIR", "", in_quotes(env) + " is not a hetsim data folder (it has no kernels_profile/devices/); "
                       "point it at a source tree or an installed PREFIX/share/hetsim, or unset it");
    }
    return env;
  }
  if (const std::filesystem::path installed = install_prefix(); !installed.empty()) return installed / "share" / "hetsim";
  return HETSIM_SOURCE_DIR;
}

std::vector<std::filesystem::path> files_with_extension(const std::filesystem::path& dir, std::string_view extension) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  const auto lower = [](std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {  // "A.CSV" is a .csv too
    if (lower(entry.path().extension().string()) == lower(std::string(extension))) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<std::string> shipped_names(std::string_view folder) {
  std::vector<std::string> names;
  for (const auto& file : files_with_extension(data_root() / folder, ".yaml")) names.push_back(file.stem().string());
  return names;
}

namespace {

// Files this process read as inputs: device, inode and status-change time (an inode a later file
// reuses, in a long process, is another file), and the name read.
struct ReadFile {
  dev_t device;
  ino_t inode;
  struct timespec changed;
  std::string name;
  [[nodiscard]] bool is(const struct stat& st) const {
    return device == st.st_dev && inode == st.st_ino && changed.tv_sec == st.st_ctim.tv_sec && changed.tv_nsec == st.st_ctim.tv_nsec;
  }
};
std::mutex read_mutex;
std::vector<ReadFile>& files_read() {
  static std::vector<ReadFile> files;
  return files;
}

void remember_read(const std::filesystem::path& path) {
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0) return;
  std::error_code ec;
  const std::filesystem::path full = std::filesystem::weakly_canonical(std::filesystem::absolute(path, ec), ec);
  static const std::filesystem::path data = [] {
    std::error_code e;
    return std::filesystem::weakly_canonical(data_root(), e);
  }();
  const auto end = std::mismatch(data.begin(), data.end(), full.begin(), full.end()).first;
  if (end == data.end()) return;  // shipped data: written by scripts/calibrate and the like on purpose
  const std::lock_guard lock(read_mutex);
  std::vector<ReadFile>& files = files_read();
  for (const ReadFile& f : files) {
    if (f.is(st)) return;
  }
  // A long process (the Python module, a fuzzer) reads file after file: the latest are kept.
  constexpr size_t kMostRemembered = 4096;
  if (files.size() >= kMostRemembered) files.erase(files.begin(), files.begin() + kMostRemembered / 2);
  files.push_back({st.st_dev, st.st_ino, st.st_ctim, path.string()});
}

}  // namespace

std::string input_read_as(const std::filesystem::path& path) {
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0) return "";
  const std::lock_guard lock(read_mutex);
  for (const ReadFile& f : files_read()) {
    if (f.is(st)) return f.name;
  }
  return "";
}

void check_input_file(const std::filesystem::path& path) {
  std::error_code ec;
  const std::filesystem::file_status st = std::filesystem::status(path, ec);
  if (ec == std::errc::too_many_symbolic_link_levels) {
    throw InputError(path.string(), "", "is a symlink loop (following its links never reaches a file)");
  }
  if (ec && ec != std::errc::no_such_file_or_directory) throw InputError(path.string(), "", "cannot be read: " + ec.message());
  if (ec || !std::filesystem::exists(st)) {
    std::error_code link_ec;
    if (std::filesystem::is_symlink(std::filesystem::symlink_status(path, link_ec))) {
      const std::filesystem::path target = std::filesystem::read_symlink(path, link_ec);
      throw InputError(path.string(), "", "is a symlink to " + in_quotes(target.string()) + ", which does not exist");
    }
    throw InputError(path.string(), "", "no such file");
  }
  if (std::filesystem::is_directory(st)) throw InputError(path.string(), "", "is a directory, not a file");
  if (!std::filesystem::is_regular_file(st)) throw InputError(path.string(), "", "is not a regular file (a pipe or a device)");
  remember_read(path);
}

std::filesystem::path resolve_input(const std::string& arg, std::string_view folder, std::string_view what) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(arg, ec)) return arg;
  // There, but not a file (a folder, a device, a symlink loop or a dangling link): say what it is.
  std::error_code link_ec;
  if (std::filesystem::exists(arg, ec) || ec == std::errc::too_many_symbolic_link_levels ||
      std::filesystem::symlink_status(arg, link_ec).type() == std::filesystem::file_type::symlink) {
    check_input_file(arg);
  }
  const std::filesystem::path shipped = data_root() / folder / (arg + ".yaml");
  if (std::filesystem::is_regular_file(shipped, ec)) return shipped;
  const std::vector<std::string> known = shipped_names(folder);
  throw InputError(arg, "", "no file and no shipped " + std::string(what) + " named " + in_quotes(arg) +
                                did_you_mean(arg, known) + " (shipped: " + join(known) + ")");
}

std::string beside(const std::filesystem::path& file, const std::string& arg) {
  const std::filesystem::path p(arg);
  if (arg.empty() || p.is_absolute()) return arg;
  std::error_code ec;
  const std::filesystem::path there = file.parent_path() / p;
  return std::filesystem::is_regular_file(there, ec) ? there.string() : arg;
}

std::string slurp(const std::filesystem::path& path) {
  check_input_file(path);  // a FIFO (a study's plan) would block the read forever
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace hetsim
