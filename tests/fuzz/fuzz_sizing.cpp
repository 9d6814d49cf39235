// File: tests/fuzz/fuzz_sizing.cpp
// Fuzz target: sizing files (studies/sizing/sizing_file.hpp load_sizing), with the shipped offers
// files next to the input so that the seeds' "offers: offers.yaml" resolve.
#include "studies/sizing/sizing_file.hpp"
#include "tests/fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  hetsim::fuzz::link_neighbours({{"offers.yaml", "tests/fixtures/sizing/offers.yaml"},
                                 {"offers-rent-2026-11.yaml", "studies/sizing/offers-rent-2026-11.yaml"},
                                 {"offers-large-clouds-2026-11.yaml", "studies/sizing/offers-large-clouds-2026-11.yaml"}});
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::filesystem::path path = hetsim::fuzz::write_input(data, size, "sizing.yaml");
  hetsim::fuzz::expect_only_input_errors("load_sizing", [&] { (void)hetsim::load_sizing(path); });
  return 0;
}
