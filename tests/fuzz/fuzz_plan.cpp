// File: tests/fuzz/fuzz_plan.cpp
// Fuzz target: SPMD plan files (planner/spmd/plan_file.hpp load_plan) for the problem the tests
// use: gpt3-1.3b on a100-v100-2x2 with roofline costs (tests/bad_inputs_test.cpp, kind "plan").
#include "planner/spmd/plan_file.hpp"
#include "planner/spmd/spmd_problem.hpp"
#include "tests/fuzz/fuzz_input.hpp"
#include "topologies/cluster.hpp"
#include "workloads/model.hpp"

namespace {

const hetsim::SpmdProblem& problem() {
  static const hetsim::SpmdProblem p = [] {
    const std::filesystem::path src = hetsim::fuzz::source_dir();
    // The seeds name the operators of every GPU on the unfused attention path (as plans for this
    // mixed A100 + V100 cluster were written before 2026-12-04): the problem they were written for.
    return hetsim::build_spmd_problem(hetsim::load_model(src / "workloads/gpt3-1.3b.yaml"),
                                      hetsim::load_cluster(src / "topologies/a100-v100-2x2.yaml"), hetsim::CostModel{},
                                      hetsim::MixedAttention::kUnfusedEverywhere);
  }();
  return p;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)problem();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::filesystem::path path = hetsim::fuzz::write_input(data, size, "plan.yaml");
  hetsim::fuzz::expect_only_input_errors("load_plan", [&] { (void)hetsim::load_plan(path, problem()); });
  return 0;
}
