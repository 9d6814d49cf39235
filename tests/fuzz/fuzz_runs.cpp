// File: tests/fuzz/fuzz_runs.cpp
// Fuzz target: validation run files (studies/validation/run_file.hpp load_runs), with the shipped
// validation clusters and models next to the input so that the seeds' relative paths resolve.
#include "studies/validation/run_file.hpp"
#include "tests/fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  hetsim::fuzz::link_neighbours({{"clusters", "studies/validation/clusters"}, {"models", "studies/validation/models"}});
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::filesystem::path path = hetsim::fuzz::write_input(data, size, "runs.yaml");
  hetsim::fuzz::expect_only_input_errors("load_runs", [&] { (void)hetsim::load_runs(path); });
  return 0;
}
