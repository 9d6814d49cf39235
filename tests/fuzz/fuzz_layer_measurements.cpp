// File: tests/fuzz/fuzz_layer_measurements.cpp
// Fuzz target: measured layer times (kernels_profile/validation.hpp load_layer_measurements).
#include "kernels_profile/validation.hpp"
#include "tests/fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::filesystem::path path = hetsim::fuzz::write_input(data, size, "layers.csv");
  hetsim::fuzz::expect_only_input_errors("load_layer_measurements",
                                         [&] { (void)hetsim::load_layer_measurements(path); });
  return 0;
}
