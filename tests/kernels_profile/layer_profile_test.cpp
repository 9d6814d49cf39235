// File: tests/kernels_profile/layer_profile_test.cpp
#include "kernels_profile/layer_profile.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "planner/block_costs.hpp"
#include "test_support.hpp"

namespace hetsim {
namespace {

std::filesystem::path write_profile() {
  const auto p = std::filesystem::temp_directory_path() / ("hetsim_profile_" + std::to_string(::getpid()) + ".csv");
  std::ofstream out(p);
  out << "model,device,layer,micro_batch,tp,fwd_s,bwd_s,optimizer_s,source\n"
         "gpt3-1.3b,A100-SXM4-40GB,transformer,1,1,0.010,0.020,0.001,test profile\n"
         "gpt3-1.3b,A100-SXM4-40GB,transformer,4,1,0.034,0.068,0.001,test profile\n"
         "gpt3-1.3b,A100-SXM4-40GB,layer0,1,1,0.012,0.024,0.001,test profile\n"
         "gpt3-1.3b,A100-SXM4-40GB,transformer,1,2,0.006,0.011,0.001,tensor parallel 2 (not used)\n";
  return p;
}

TEST(LayerProfile, ExactInterpolatedAndPerLayerRows) {
  const auto path = write_profile();
  const LayerProfiles p = LayerProfiles::load(path);
  EXPECT_EQ(p.rows().size(), 4u);
  EXPECT_DOUBLE_EQ(p.lookup("gpt3-1.3b", "A100-SXM4-40GB", "layer5", 1)->fwd_s, 0.010);
  EXPECT_DOUBLE_EQ(p.lookup("gpt3-1.3b", "A100-SXM4-40GB", "layer0", 1)->fwd_s, 0.012);  // its own row wins
  const auto two = p.lookup("gpt3-1.3b", "A100-SXM4-40GB", "layer5", 2);
  ASSERT_TRUE(two);
  EXPECT_TRUE(two->interpolated);
  EXPECT_NEAR(two->fwd_s, 0.018, 1e-12);  // a third of the way from 1 to 4
  EXPECT_FALSE(p.lookup("gpt3-1.3b", "A100-SXM4-40GB", "layer5", 8));  // no extrapolation
  EXPECT_FALSE(p.lookup("gpt3-1.3b", "V100-SXM2-32GB", "layer5", 1));
  EXPECT_FALSE(p.lookup("gpt3-1.3b", "A100-SXM4-40GB", "head", 1));
  std::filesystem::remove(path);
}

TEST(LayerProfile, BlockCostsUseItWhereItApplies) {
  const auto path = write_profile();
  const CostModel cost(nullptr, std::make_shared<LayerProfiles>(LayerProfiles::load(path)));
  const ModelSpec m = load_model(test::shipped("workloads", "gpt3-1.3b"));
  const Device a100 = load_device(test::shipped("kernels_profile/devices", "A100-SXM4-40GB"));
  const std::vector<BlockCost> blocks = block_costs(build_op_graph(m, 1, DType::kFp16), a100, cost);
  EXPECT_DOUBLE_EQ(blocks[1].fwd_s, 0.012);  // layer0
  EXPECT_DOUBLE_EQ(blocks[2].bwd_s, 0.020);  // layer1 from the transformer row
  EXPECT_DOUBLE_EQ(blocks[2].sources[static_cast<int>(CostSource::kLayerProfile)], 0.030);
  EXPECT_GT(blocks.front().sources[static_cast<int>(CostSource::kRoofline)], 0);  // embedding: not profiled
  EXPECT_GT(blocks[2].params, 0);  // parameters and memory still come from the operator graph
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace hetsim
