// File: tests/fuzz/fuzz_layer_profile.cpp
// Fuzz target: per-layer profiles (kernels_profile/layer_profile.hpp LayerProfiles::load).
#include "kernels_profile/layer_profile.hpp"
#include "tests/fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::filesystem::path path = hetsim::fuzz::write_input(data, size, "profile.csv");
  hetsim::fuzz::expect_only_input_errors("LayerProfiles::load", [&] { (void)hetsim::LayerProfiles::load(path); });
  return 0;
}
