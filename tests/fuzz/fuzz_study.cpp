// File: tests/fuzz/fuzz_study.cpp
// Fuzz target: study files (studies/sweep/study_file.hpp load_study).
#include "studies/sweep/study_file.hpp"
#include "tests/fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::filesystem::path path = hetsim::fuzz::write_input(data, size, "study.yaml");
  hetsim::fuzz::expect_only_input_errors("load_study", [&] { (void)hetsim::load_study(path); });
  return 0;
}
