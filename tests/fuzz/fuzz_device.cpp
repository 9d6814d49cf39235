// File: tests/fuzz/fuzz_device.cpp
// Fuzz target: device files (kernels_profile/device.hpp load_device).
#include "kernels_profile/device.hpp"
#include "tests/fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::filesystem::path path = hetsim::fuzz::write_input(data, size, "device.yaml");
  hetsim::fuzz::expect_only_input_errors("load_device", [&] { (void)hetsim::load_device(path); });
  return 0;
}
