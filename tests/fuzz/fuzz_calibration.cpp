// File: tests/fuzz/fuzz_calibration.cpp
// Fuzz target: calibration profiles (kernels_profile/calibration_profile.hpp load_calibration_profile).
#include "kernels_profile/calibration_profile.hpp"
#include "tests/fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::filesystem::path path = hetsim::fuzz::write_input(data, size, "calibration.yaml");
  hetsim::fuzz::expect_only_input_errors("load_calibration_profile", [&] { (void)hetsim::load_calibration_profile(path); });
  return 0;
}
