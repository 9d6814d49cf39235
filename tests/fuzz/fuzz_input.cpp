// File: tests/fuzz/fuzz_input.cpp
// Input files, neighbour links and the report of unexpected exceptions for the fuzz targets.
#include "tests/fuzz/fuzz_input.hpp"

#include <cxxabi.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <typeinfo>

#ifndef HETSIM_FUZZ_SOURCE_DIR
#error "HETSIM_FUZZ_SOURCE_DIR must be defined by the build"
#endif

namespace hetsim::fuzz {
namespace {

std::filesystem::path make_work_dir() {
  const char* tmp = std::getenv("TMPDIR");
  std::filesystem::path base = tmp != nullptr && *tmp != '\0' ? std::filesystem::path(tmp) : "/dev/shm";
  std::error_code ec;
  if (!std::filesystem::is_directory(base, ec)) base = "/tmp";
  const std::filesystem::path dir = base / ("hetsim-fuzz-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::atexit([] {
    std::error_code ignored;
    std::filesystem::remove_all(work_dir(), ignored);
  });
  return dir;
}

std::string demangled(const char* name) {
  int status = 0;
  const std::unique_ptr<char, void (*)(void*)> d(abi::__cxa_demangle(name, nullptr, nullptr, &status), std::free);
  return status == 0 && d ? std::string(d.get()) : std::string(name);
}

}  // namespace

std::filesystem::path source_dir() { return HETSIM_FUZZ_SOURCE_DIR; }

const std::filesystem::path& work_dir() {
  static const std::filesystem::path dir = make_work_dir();
  return dir;
}

void link_neighbours(const std::vector<std::pair<std::string, std::string>>& links) {
  for (const auto& [name, target] : links) {
    const std::filesystem::path link = work_dir() / name;
    std::error_code ec;
    if (std::filesystem::is_symlink(link, ec)) continue;
    std::filesystem::create_symlink(source_dir() / target, link);
  }
}

std::filesystem::path write_input(const uint8_t* data, size_t size, const std::string& name) {
  const std::filesystem::path path = work_dir() / name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  out.close();
  if (!out) {
    std::fprintf(stderr, "fuzz: cannot write %s\n", path.c_str());
    std::abort();  // the harness's own failure, not the loader's
  }
  return path;
}

void note_input_error(const std::exception& e) {
  static const bool verbose = std::getenv("HETSIM_FUZZ_VERBOSE") != nullptr;
  if (verbose) std::fprintf(stderr, "fuzz: InputError: %s\n", e.what());
}

void unexpected_exception(const char* loader) {
  const std::exception_ptr e = std::current_exception();
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    std::fprintf(stderr, "fuzz: %s threw %s (not InputError): %s\n", loader, demangled(typeid(x).name()).c_str(),
                 x.what());
  } catch (...) {
    const std::type_info* t = abi::__cxa_current_exception_type();
    std::fprintf(stderr, "fuzz: %s threw %s (not a std::exception)\n", loader,
                 t != nullptr ? demangled(t->name()).c_str() : "an unknown type");
  }
  std::fflush(stderr);
  std::abort();
}

}  // namespace hetsim::fuzz
