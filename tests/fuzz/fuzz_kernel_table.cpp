// File: tests/fuzz/fuzz_kernel_table.cpp
// Fuzz target: kernel tables (kernels_profile/kernel_table.hpp KernelTables::load_file, then
// prepare() as load_dir does: sorting and the least-squares fits of whatever was read).
#include "kernels_profile/kernel_table.hpp"
#include "tests/fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::filesystem::path path = hetsim::fuzz::write_input(data, size, "table.csv");
  hetsim::fuzz::expect_only_input_errors("KernelTables::load_file", [&] {
    hetsim::KernelTables tables;
    tables.load_file(path);
    tables.prepare();
  });
  return 0;
}
