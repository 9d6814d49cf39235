// File: tests/fuzz/fuzz_hybrid_plan.cpp
// Fuzz target: hybrid plan files (planner/hybrid/hybrid_plan_file.hpp plan_file_kind, then
// load_hybrid_plan as `hetsim simulate --plan` does) for gpt3-1.3b on a100-v100-2x2, the setting
// of tests/fixtures/bad/hybrid_plan_*.yaml.
#include "planner/hybrid/hybrid_plan_file.hpp"
#include "tests/fuzz/fuzz_input.hpp"
#include "topologies/cluster.hpp"
#include "workloads/model.hpp"

namespace {

struct Setting {
  hetsim::ModelSpec model;
  hetsim::Cluster cluster;
};

const Setting& setting() {
  static const Setting s = [] {
    const std::filesystem::path src = hetsim::fuzz::source_dir();
    return Setting{hetsim::load_model(src / "workloads/gpt3-1.3b.yaml"),
                   hetsim::load_cluster(src / "topologies/a100-v100-2x2.yaml")};
  }();
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)setting();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::filesystem::path path = hetsim::fuzz::write_input(data, size, "hybrid.yaml");
  hetsim::fuzz::expect_only_input_errors("load_hybrid_plan", [&] {
    if (hetsim::plan_file_kind(path) != "hybrid") return;  // an SPMD plan: fuzz_plan's
    (void)hetsim::load_hybrid_plan(path, setting().model, setting().cluster);
  });
  return 0;
}
