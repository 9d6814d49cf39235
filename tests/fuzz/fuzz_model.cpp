// File: tests/fuzz/fuzz_model.cpp
// Fuzz target: model files (workloads/model.hpp load_model).
#include "tests/fuzz/fuzz_input.hpp"
#include "workloads/model.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::filesystem::path path = hetsim::fuzz::write_input(data, size, "model.yaml");
  hetsim::fuzz::expect_only_input_errors("load_model", [&] { (void)hetsim::load_model(path); });
  return 0;
}
