// File: tests/kernels_profile/framework_kernels_test.cpp
// Rows measured as training frameworks run kernels (kernels_profile/torch/framework_gemms.py,
// memory_kernels.py): GEMMs per pass direction, grouped expert GEMMs, the optional `library` and
// `sm_clock_mhz` columns, framework rows superseding hetsim-kernels' rows of the same kernel, and
// layer files' clock columns.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "base/input_error.hpp"
#include "kernels_profile/cost_model.hpp"
#include "kernels_profile/kernel_table.hpp"
#include "kernels_profile/validation.hpp"
#include "test_support.hpp"

namespace hetsim {
namespace {

constexpr const char* kHeader = "device,kernel,dtype,batch,m,n,k,bytes,seconds,gpu,driver,clock_mhz,date";

// The message `load` is refused with; empty where it was accepted.
template <typename Load>
std::string refusal(Load load) {
  try {
    load();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

class FrameworkRows : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("hetsim_framework_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  KernelTables load(const std::string& tool_rows, const std::string& framework_rows) {
    std::filesystem::remove(dir_ / "h100.csv");  // a table of no rows is refused
    if (!tool_rows.empty()) std::ofstream(dir_ / "h100.csv") << kHeader << "\n" << tool_rows;
    std::filesystem::remove(dir_ / "h100-framework.csv");
    if (!framework_rows.empty()) std::ofstream(dir_ / "h100-framework.csv") << kHeader << ",library\n" << framework_rows;
    return KernelTables::load_dir(dir_);
  }
  static std::string row(const std::string& kernel, const std::string& shape, double seconds, const std::string& library = "") {
    return "H100-SXM5-80GB," + kernel + ",bf16," + shape + "," + std::to_string(seconds) + ",H100,13.0,1980,2026-11-27T00:00:00Z" +
           (library.empty() ? "" : "," + library) + "\n";
  }
  std::filesystem::path dir_;
};

TEST_F(FrameworkRows, SupersedeTheToolsRowsOfTheirKernelAndNoOthers) {
  // hetsim-kernels' LayerNorm at 32 MB took 25 us; PyTorch's 16 us: PyTorch's alone is used, at
  // that size and between its sizes. GeLU has no framework rows: the tool's stay.
  const std::string tool = row("layernorm_fwd", ",,,,33554432", 25e-6) + row("layernorm_fwd", ",,,,134217728", 100e-6) +
                           row("gelu_fwd", ",,,,33554432", 24e-6);
  const std::string fw = row("layernorm_fwd", ",,,,33554432", 16e-6, "torch 2.11") +
                         row("layernorm_fwd", ",,,,67108864", 30e-6, "torch 2.11");
  const KernelTables t = load(tool, fw);
  const KernelSeries* ln = t.find("H100-SXM5-80GB", "layernorm_fwd", DType::kBf16);
  ASSERT_NE(ln, nullptr);
  ASSERT_EQ(ln->samples().size(), 2u);
  EXPECT_DOUBLE_EQ(ln->by_bytes(33554432)->seconds, 16e-6);
  EXPECT_EQ(ln->by_bytes(33554432)->source, CostSource::kMeasured);
  EXPECT_DOUBLE_EQ(t.find("H100-SXM5-80GB", "gelu_fwd", DType::kBf16)->by_bytes(33554432)->seconds, 24e-6);
  // Without PyTorch's rows the tool's are used.
  EXPECT_DOUBLE_EQ(load(tool, "").find("H100-SXM5-80GB", "layernorm_fwd", DType::kBf16)->by_bytes(33554432)->seconds, 25e-6);
}

TEST_F(FrameworkRows, EachPassDirectionTakesItsOwnLayout) {
  // NN rows (cuBLAS as hetsim-kernels ran it) 1 ms for every shape; framework rows: forward
  // x·Wᵀ 0.5 ms, data gradient 0.7 ms, weight gradient 0.9 ms (dW[out x in] = dyᵀ x).
  const long m = 4096, n = 3072, k = 1024;
  const auto s = [](long a, long b, long c) { return "1," + std::to_string(a) + "," + std::to_string(b) + "," + std::to_string(c) + ","; };
  const std::string nn = row("gemm", s(m, n, k), 1e-3) + row("gemm", s(m, k, n), 1e-3) + row("gemm", s(k, n, m), 1e-3);
  const std::string fw = row("gemm_fwd", s(m, n, k), 0.5e-3, "torch") + row("gemm_dgrad", s(m, k, n), 0.7e-3, "torch") +
                         row("gemm_wgrad", s(n, k, m), 0.9e-3, "torch");
  const CostModel cost(std::make_shared<KernelTables>(load(nn, fw)), nullptr);
  const Device h100 = load_device(test::shipped("kernels_profile/devices", "H100-SXM5-80GB"));
  Op qkv = Op::make("qkv", OpKind::kLinear, 0);
  qkv.gemm = {1, m, n, k};
  qkv.fwd_flops = 2.0 * m * n * k;
  qkv.bwd_flops = 2 * qkv.fwd_flops;
  const OpCost fwd = cost.op_time(h100, qkv, DType::kBf16, Pass::kForward);
  EXPECT_DOUBLE_EQ(fwd.seconds, 0.5e-3);
  EXPECT_DOUBLE_EQ(fwd.by_source[static_cast<int>(CostSource::kMeasured)], fwd.seconds);
  EXPECT_DOUBLE_EQ(cost.op_time(h100, qkv, DType::kBf16, Pass::kBackward).seconds, 0.7e-3 + 0.9e-3);
  qkv.recompute_flops = qkv.fwd_flops;  // a recomputed forward runs the forward layout again
  EXPECT_DOUBLE_EQ(cost.op_time(h100, qkv, DType::kBf16, Pass::kBackward).seconds, 0.7e-3 + 0.9e-3 + 0.5e-3);
  // Attention's batched products have no weight: the NN rows, as before.
  Op scores = Op::make("scores", OpKind::kAttnScores, 0);
  scores.gemm = {1, m, n, k};
  scores.fwd_flops = qkv.fwd_flops;
  EXPECT_DOUBLE_EQ(cost.op_time(h100, scores, DType::kBf16, Pass::kForward).seconds, 1e-3);
  // No framework rows in fp16: the NN rows (none here either: the roofline).
  EXPECT_GT(cost.op_time(h100, qkv, DType::kFp16, Pass::kForward).by_source[static_cast<int>(CostSource::kRoofline)], 0);
}

TEST_F(FrameworkRows, ExpertGemmsRunAsOneGroupedKernelOverAllLocalExperts) {
  // 16 local experts of 1024 rows: the grouped rows hold all 16384 rows in m (forward, data
  // gradient) or k (weight gradient). 2·m·n·k = 2·16384·1536·4096 FLOPs in 0.3 ms is 687 TFLOP/s,
  // within an H100's bf16 peak; counted with the batch it would be 16x over and refused.
  const std::string fw = row("grouped_gemm_fwd", "16,16384,1536,4096,", 0.3e-3, "torch") +
                         row("grouped_gemm_dgrad", "16,16384,4096,1536,", 0.35e-3, "torch") +
                         row("grouped_gemm_wgrad", "16,1536,4096,16384,", 0.4e-3, "torch");
  std::string fp8 = fw;
  for (size_t at = 0; (at = fp8.find(",bf16,", at)) != std::string::npos;) fp8.replace(at, 6, ",fp8,");
  const CostModel cost(std::make_shared<KernelTables>(load("", fw + fp8)), nullptr);
  Device h100 = load_device(test::shipped("kernels_profile/devices", "H100-SXM5-80GB"));
  h100.fitted = FittedCosts{};  // the kernels alone: no calibration profile's host time
  Op fc1 = Op::make("expert_fc1", OpKind::kMoeExpert, 0);
  fc1.expert = true;
  fc1.gemm = {16, 1024, 1536, 4096};
  fc1.fwd_flops = 2.0 * 16 * 1024 * 1536 * 4096;
  fc1.bwd_flops = 2 * fc1.fwd_flops;
  EXPECT_DOUBLE_EQ(cost.op_time(h100, fc1, DType::kBf16, Pass::kForward).seconds, 0.3e-3);
  EXPECT_DOUBLE_EQ(cost.op_time(h100, fc1, DType::kBf16, Pass::kBackward).seconds, 0.35e-3 + 0.4e-3);
  fc1.gemm_dtype = DType::kFp8;  // an fp8 recipe: the fp8 rows (plus its casts, on the roofline)
  const OpCost f8 = cost.op_time(h100, fc1, DType::kBf16, Pass::kForward);
  EXPECT_DOUBLE_EQ(f8.by_source[static_cast<int>(CostSource::kMeasured)], 0.3e-3);
}

TEST_F(FrameworkRows, Fp8CastsStayOnTheRooflineBesideMeasuredCastRows) {
  // An fp8 GEMM input of 64 MiB as hetsim counts its cast (6 bytes per element under current
  // scaling), with an fp8_cast row of 40 us for it: PyTorch's casts, process-dependent, not used.
  const double bytes = 64.0 * 1024 * 1024;
  std::string gemm = row("gemm_fwd", "1,4096,4096,4096,", 0.1e-3, "torch");
  gemm.replace(gemm.find(",bf16,"), 6, ",fp8,");
  const CostModel cost(std::make_shared<KernelTables>(load("", gemm + row("fp8_cast", ",,,," + std::to_string(static_cast<long>(bytes)), 40e-6, "torch"))),
                       nullptr);
  const CostModel bare(std::make_shared<KernelTables>(load("", gemm)), nullptr);
  const Device h100 = load_device(test::shipped("kernels_profile/devices", "H100-SXM5-80GB"));
  Op x = Op::make("qkv", OpKind::kLinear, 0);
  x.gemm = {1, 4096, 4096, 4096};
  x.fwd_flops = 2.0 * 4096 * 4096 * 4096;
  x.gemm_dtype = DType::kFp8;
  x.cast_fwd_bytes = bytes;
  const OpCost c = cost.op_time(h100, x, DType::kBf16, Pass::kForward);
  const double roofline = c.by_source[static_cast<int>(CostSource::kRoofline)];
  EXPECT_GT(roofline, 0);
  EXPECT_LT(roofline, 40e-6);  // H100's bandwidth moves 64 MiB faster than the row says
  EXPECT_DOUBLE_EQ(c.seconds, 0.1e-3 + roofline);
  EXPECT_DOUBLE_EQ(c.seconds, bare.op_time(h100, x, DType::kBf16, Pass::kForward).seconds);
}

TEST_F(FrameworkRows, TheLibraryColumnIsOptionalAndNothingElseMayFollow) {
  EXPECT_NO_THROW(load(row("gemm", "1,1024,1024,1024,", 1e-5), row("gemm_fwd", "1,1024,1024,1024,", 1e-5, "torch")));
  std::ofstream(dir_ / "h100-framework.csv") << kHeader << ",library,extra\n";
  try {
    (void)KernelTables::load_dir(dir_);
    ADD_FAILURE() << "a column after library was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("h100-framework.csv:1:1: error: header: expected the columns device, kernel"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("then optionally library"), std::string::npos) << e.what();
  }
}

TEST_F(FrameworkRows, RowsMayStateTheSmClockTheyRanAtAndRepeatsTakeTheMedianOfTheStatedClocks) {
  const std::string shape = "1,4096,4096,4096,";
  std::filesystem::remove(dir_ / "h100.csv");
  auto write = [&](const std::string& rows) {
    std::ofstream(dir_ / "h100-framework.csv") << kHeader << ",library,sm_clock_mhz\n" << rows;
  };
  auto clocked = [&](const std::string& date, double seconds, const std::string& mhz) {
    return "H100-SXM5-80GB,gemm_fwd,bf16," + shape + "," + std::to_string(seconds) + ",H100,13.0,1980," + date + ",torch," + mhz + "\n";
  };
  // Three runs of one shape: one says nothing of its clock; the median of the two stated is kept.
  write(clocked("2026-11-27T00:00:00Z", 1e-3, "1500") + clocked("2026-12-04T00:00:00Z", 2e-3, "") +
        clocked("2026-12-05T00:00:00Z", 3e-3, "1700"));
  const KernelTables t = KernelTables::load_dir(dir_);
  const KernelSeries* s = t.find("H100-SXM5-80GB", "gemm_fwd", DType::kBf16);
  ASSERT_NE(s, nullptr);
  ASSERT_EQ(s->samples().size(), 1u);
  EXPECT_DOUBLE_EQ(s->samples()[0].seconds, 2e-3);
  EXPECT_DOUBLE_EQ(s->samples()[0].mhz, 1600);
  // A clock beyond the GPU's maximum (clock_mhz) or below any GPU's, or one with no maximum to be
  // checked against, is said at its column.
  for (const std::string& bad : {std::string("2100"), std::string("50"), std::string("fast"), std::string("1500 no max")}) {
    std::string r = clocked("2026-11-27T00:00:00Z", 1e-3, bad.substr(0, 4));
    if (bad.ends_with("no max")) r.replace(r.find(",1980,"), 6, ",,");
    write(r);
    const std::string what = refusal([&] { (void)KernelTables::load_dir(dir_); });
    EXPECT_NE(what.find("h100-framework.csv:2:"), std::string::npos) << bad << " MHz: " << what;
    EXPECT_NE(what.find("error: sm_clock_mhz: "), std::string::npos) << bad << " MHz: " << what;
  }
}

TEST(LayerFiles, StateTheClocksTheirPassesRanAtAndHowLongTheLayerRanBefore) {
  const auto dir = std::filesystem::temp_directory_path() / ("hetsim_layer_clocks_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string header = "device,hidden,heads,ffn_hidden,seq_len,micro_batch,dtype,fwd_s,bwd_s,gpu,driver,clock_mhz,date,attention";
  const std::string row = "H100-SXM5-80GB,4096,32,16384,2048,1,bf16,0.0013,0.0033,gpu,driver,1980,2026-12-04T00:00:00Z,flash";
  std::ofstream(dir / "clocks.csv") << header << ",fwd_sm_clock_mhz,step_sm_clock_mhz,sustained_s\n" << row << ",1980,1620,3\n";
  std::ofstream(dir / "older.csv") << header << ",fwd_sm_clock_mhz,step_sm_clock_mhz\n" << row << ",,\n";
  std::ofstream(dir / "bad.csv") << header << ",fwd_sm_clock_mhz,step_sm_clock_mhz\n" << row << ",1980,20\n";
  // Two problems in one row: both said (the clock is read whatever else is wrong).
  std::string unknown = row;
  unknown.replace(0, unknown.find(','), "NO-SUCH-GPU");
  std::ofstream(dir / "two.csv") << header << ",fwd_sm_clock_mhz,step_sm_clock_mhz\n" << unknown << ",abc,\n";
  const std::vector<LayerMeasurement> rows = load_layer_measurements(dir / "clocks.csv");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_DOUBLE_EQ(rows[0].fwd_mhz, 1980);
  EXPECT_DOUBLE_EQ(rows[0].step_mhz, 1620);
  EXPECT_DOUBLE_EQ(rows[0].sustained_s, 3);
  const std::vector<LayerMeasurement> older = load_layer_measurements(dir / "older.csv");
  ASSERT_EQ(older.size(), 1u);
  EXPECT_EQ(older[0].fwd_mhz, 0);
  const std::string slow = refusal([&] { (void)load_layer_measurements(dir / "bad.csv"); });
  EXPECT_NE(slow.find("bad.csv:2:"), std::string::npos) << slow;
  EXPECT_NE(slow.find("error: step_sm_clock_mhz: 20 MHz is below any GPU"), std::string::npos) << slow;
  const std::string two = refusal([&] { (void)load_layer_measurements(dir / "two.csv"); });
  EXPECT_NE(two.find("error: device:"), std::string::npos) << two;
  EXPECT_NE(two.find("error: fwd_sm_clock_mhz:"), std::string::npos) << two;
  std::filesystem::remove_all(dir);
}

TEST(Fp8Layers, SayHowTheirCastsRanAndArePredictedWithTheFp8Recipe) {
  const auto dir = std::filesystem::temp_directory_path() / ("hetsim_fp8_layers_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string header = "device,hidden,heads,ffn_hidden,seq_len,micro_batch,dtype,fwd_s,bwd_s,gpu,driver,clock_mhz,date,attention";
  const std::string fp8 = "H100-SXM5-80GB,4096,32,16384,2048,1,fp8,0.0012,0.0027,gpu,driver,1980,2026-11-27T00:00:00Z,";
  const std::string bf16 = "H100-SXM5-80GB,4096,32,16384,2048,1,bf16,0.0013,0.0033,gpu,driver,1980,2026-11-27T00:00:00Z,";
  std::ofstream(dir / "good.csv") << header << "\n" << fp8 << "flash+compiled-casts\n" << bf16 << "flash\n";
  std::ofstream(dir / "per_shape.csv") << header << "\n" << fp8 << "flash+shape-compiled-casts\n";
  EXPECT_EQ(load_layer_measurements(dir / "per_shape.csv").at(0).casts, "shape-compiled");
  std::ofstream(dir / "no_casts.csv") << header << "\n" << fp8 << "flash\n";
  std::ofstream(dir / "casts_on_bf16.csv") << header << "\n" << bf16 << "flash+eager-casts\n";
  const std::vector<LayerMeasurement> rows = load_layer_measurements(dir / "good.csv");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].casts, "compiled");
  EXPECT_TRUE(rows[0].flash);
  EXPECT_EQ(rows[1].casts, "");
  for (const char* bad : {"no_casts.csv", "casts_on_bf16.csv"}) {
    try {
      (void)load_layer_measurements(dir / bad);
      ADD_FAILURE() << bad << " accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(std::string(bad) + ":2:"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("error: dtype:"), std::string::npos) << e.what();
    }
  }
  // On the roofline the fp8 layer's GEMMs run at the fp8 peak: faster than the bf16 layer.
  const CostModel roofline(nullptr, nullptr);
  const Device h100 = load_device(test::shipped("kernels_profile/devices", "H100-SXM5-80GB"));
  EXPECT_LT(predict_layer(rows[0], h100, roofline).fwd_s, predict_layer(rows[1], h100, roofline).fwd_s);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace hetsim
