// File: tests/studies/calibration_transfer_test.cpp
// A profile's `transferred_to`: sibling GPU types it applies to without their runs. Shipped, it keeps
// a what-if between siblings (B200 to GB200, H100 to H200) from comparing a corrected model with a
// raw one; said in every report; a wrong entry is refused with its line.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "base/input_error.hpp"
#include "kernels_profile/calibration_profile.hpp"
#include "kernels_profile/cost_model.hpp"
#include "kernels_profile/device.hpp"
#include "planner/strategies.hpp"
#include "test_support.hpp"
#include "topologies/cluster.hpp"
#include "workloads/model.hpp"

namespace hetsim {
namespace {

std::string in_force(const std::string& gpu) {
  const std::optional<CalibrationProfile> p = calibration_for(gpu);
  return p ? p->name : std::string("none");
}

// `profile` written as a file (calibration_profile_text) and read back.
CalibrationProfile read_back(const CalibrationProfile& profile) {
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("hetsim-" + profile.name + "-" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(file) << calibration_profile_text(profile);
  const CalibrationProfile back = load_calibration_profile(file);
  std::filesystem::remove(file);
  return back;
}

TEST(CalibrationTransfer, SiblingGpuTypesTakeTheShippedProfileOfTheirFittedSibling) {
  use_shipped_calibrations();
  EXPECT_EQ(in_force("H200-SXM-141GB"), "megatron-core-2026");
  for (const char* gpu : {"GB200", "B300", "GB300"}) EXPECT_EQ(in_force(gpu), "megatron-core-2026-b200") << gpu;
  // A sibling's parameters are its fitted sibling's, every one.
  EXPECT_EQ(calibration_for("GB200")->fitted_costs(), calibration_for("B200")->fitted_costs());
  EXPECT_EQ(calibration_for("H200-SXM-141GB")->fitted_costs(), calibration_for("H100-SXM5-80GB")->fitted_costs());
  EXPECT_EQ(in_force("MI300X"), "primus-2026");
  EXPECT_EQ(calibration_for("MI300X")->fitted_costs(), calibration_for("MI325X")->fitted_costs());
  // Not transferred across architectures or vendors.
  EXPECT_EQ(in_force("MI250X"), "none");
  EXPECT_EQ(in_force("H20"), "none");
}

TEST(CalibrationTransfer, AReportOnATransferredGpuTypeSaysFromWhichAndWhy) {
  use_shipped_calibrations();
  const Device gb300 = load_device(test::shipped("kernels_profile/devices", "GB300"));
  EXPECT_NE(gb300.calibration.find("megatron-core-2026-b200 ("), std::string::npos) << gb300.calibration;
  EXPECT_NE(gb300.calibration.find("; transferred to GB300 from B200, B300, GB200 (moe_layer_host, pass_host, ssm_scan_time_excess only), "
                                   "fitted on none of its runs: a Blackwell Ultra GPU"),
            std::string::npos)
      << gb300.calibration;
  for (const char* fitted : {"B200", "GB200"}) {  // GB200's Nemotron 3 Nano rows are in the fit
    const Device d = load_device(test::shipped("kernels_profile/devices", fitted));
    EXPECT_NE(d.calibration.find("megatron-core-2026-b200 ("), std::string::npos) << d.calibration;
    EXPECT_EQ(d.calibration.find("transferred"), std::string::npos) << d.calibration;
  }
  const ModelSpec model = load_model(test::shipped("workloads", "gpt3-1.3b"));
  Cluster c = test::shipped_cluster("a100-8x8");
  for (NodeType& nt : c.node_types) nt.gpu = gb300;
  const std::vector<std::string> said = assumptions(model, c, CostModel::shipped());
  const bool named = std::any_of(said.begin(), said.end(), [](const std::string& a) {
    return a.starts_with("calibration: profile in force on GB300: megatron-core-2026-b200") && a.find("transferred to GB300 from B200") != std::string::npos;
  });
  EXPECT_TRUE(named);
  // --calibration FILE applies a file's transfers too; none restores the raw model.
  CalibrationProfile own = *calibration_for("B200");
  own.name = "own";
  use_calibration_profile(own);
  EXPECT_EQ(in_force("GB300"), "own");
  use_no_calibration();
  EXPECT_EQ(in_force("GB300"), "none");
  use_shipped_calibrations();
}

TEST(CalibrationTransfer, ATransferIsWrittenAndReadBack) {
  CalibrationProfile transferred;
  transferred.name = "a-transferred";
  transferred.software = "s";
  transferred.devices = {"H100-SXM5-80GB"};
  transferred.transferred_to = {{"H200-SXM-141GB", "siblings"}};
  transferred.fitted = transferred.era = "2026-11-28";
  transferred.parameters = {{"pass_host", 1e-4, 1e-5}};
  transferred.fitted_on = {"a"};
  const std::string text = calibration_profile_text(transferred);
  EXPECT_NE(text.find("transferred_to:\n  - {device: \"H200-SXM-141GB\", why: \"siblings\"}\n"), std::string::npos) << text;
  const CalibrationProfile back = read_back(transferred);
  ASSERT_EQ(back.transferred_to.size(), 1u);
  EXPECT_EQ(back.transferred_to[0].device, "H200-SXM-141GB");
  EXPECT_EQ(back.transferred_to[0].why, "siblings");
  EXPECT_TRUE(back.covers("H200-SXM-141GB"));
  EXPECT_NE(back.transfer_to("H200-SXM-141GB"), nullptr);
  EXPECT_EQ(back.transfer_to("H100-SXM5-80GB"), nullptr);
  EXPECT_FALSE(back.covers("B200"));
}

TEST(CalibrationTransfer, AWrongTransferIsRefusedWithItsLine) {
  const std::filesystem::path file = std::filesystem::temp_directory_path() / ("hetsim-bad-transfer-" + std::to_string(::getpid()) + ".yaml");
  auto refusal = [&](const std::string& entry) {
    std::ofstream(file) << "name: t\nsoftware: \"x\"\nfitted: 2026-11-29\ndevices: [B200]\ntransferred_to:\n  - " << entry
                        << "\nparameters:\n  gemm_time_excess: {value: 0.2, uncertainty: 0.01}\nfitted_on: [a]\n";
    try {
      (void)load_calibration_profile(file);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("loaded");
  };
  EXPECT_EQ(refusal("{device: GB200, why: \"siblings\"}"), "loaded");
  EXPECT_NE(refusal("{device: GB201, why: \"siblings\"}").find(":6:"), std::string::npos);
  EXPECT_NE(refusal("{device: GB201, why: \"siblings\"}").find("transferred_to[0].device"), std::string::npos);
  EXPECT_NE(refusal("{device: B200, why: \"siblings\"}").find("\"B200\" is in devices: the profile was fitted on it, not transferred to it"),
            std::string::npos);
  EXPECT_NE(refusal("{device: GB200, why: \"  \"}").find("why: is empty"), std::string::npos);
  EXPECT_NE(refusal("{device: GB200}").find("why"), std::string::npos);
  EXPECT_NE(refusal("{device: GB200, why: \"a\"}\n  - {device: GB200, why: \"b\"}").find("\"GB200\" is listed twice"), std::string::npos);
  EXPECT_NE(refusal("{device: GB200, why: \"a\", extra: 1}").find("extra"), std::string::npos);
  // `parameters`: only those carry over; each must be one the profile holds, once.
  EXPECT_EQ(refusal("{device: GB200, why: \"a\", parameters: [gemm_time_excess]}"), "loaded");
  EXPECT_NE(refusal("{device: GB200, why: \"a\", parameters: [moe_layer_host]}")
                .find("transferred_to[0].parameters: \"moe_layer_host\" is not a parameter of this profile (it holds gemm_time_excess)"),
            std::string::npos);
  EXPECT_NE(refusal("{device: GB200, why: \"a\", parameters: [gemm_time_excess, gemm_time_excess]}").find("gemm_time_excess"), std::string::npos);
  EXPECT_NE(refusal("{device: GB200, why: \"a\", parameters: []}").find("transferred_to[0].parameters: expected a non-empty list of names"), std::string::npos);
  std::filesystem::remove(file);
}

TEST(CalibrationTransfer, ATransferOfSomeParametersCarriesOnlyThose) {
  CalibrationProfile p;
  p.name = "some";
  p.software = "s";
  p.devices = {"B200"};
  p.transferred_to = {{"GB200", "all of them"}, {"GB300", "the host time only", {"moe_layer_host"}}};
  p.fitted = p.era = "2026-12-03";
  p.parameters = {{"moe_layer_host", 3e-3, 3e-4}, {"gemm_time_excess", 0.28, 0.02}};
  p.fitted_on = {"a"};
  EXPECT_EQ(p.fitted_costs_on("B200"), p.fitted_costs());
  EXPECT_EQ(p.fitted_costs_on("GB200"), p.fitted_costs());
  const FittedCosts gb300 = p.fitted_costs_on("GB300");
  EXPECT_DOUBLE_EQ(gb300.moe_layer_s, 3e-3);
  EXPECT_EQ(gb300.gemm_time_excess, 0.0);
  EXPECT_NE(p.describe_on("GB300").find("transferred to GB300 from B200 (moe_layer_host only), fitted on none of its runs: the host time only"),
            std::string::npos)
      << p.describe_on("GB300");
  // Written and read back with its list.
  const std::string text = calibration_profile_text(p);
  EXPECT_NE(text.find("  - {device: \"GB300\", why: \"the host time only\", parameters: [\"moe_layer_host\"]}\n"), std::string::npos) << text;
  EXPECT_EQ(read_back(p).fitted_costs_on("GB300"), gb300);
  // The shipped profile carries only B200's host time to GB300: a device loaded there takes no GEMM excess.
  use_shipped_calibrations();
  const Device shipped = load_device(test::shipped("kernels_profile/devices", "GB300"));
  EXPECT_EQ(shipped.fitted.gemm_time_excess, 0.0);
  EXPECT_EQ(shipped.fitted.moe_layer_s, calibration_for("B200")->fitted_costs().moe_layer_s);
  EXPECT_GT(load_device(test::shipped("kernels_profile/devices", "GB200")).fitted.gemm_time_excess, 0.0);
}

}  // namespace
}  // namespace hetsim
