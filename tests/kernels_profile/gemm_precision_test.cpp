// File: tests/kernels_profile/gemm_precision_test.cpp
// Low-precision GEMM recipes: which operators run in the low format, the casts around them in
// closed form, and their cost on a device (the GEMMs faster by the peaks' ratio, nothing else
// changed).
#include "workloads/gemm_precision.hpp"

#include <gtest/gtest.h>

#include "base/input_error.hpp"
#include "kernels_profile/cost_model.hpp"
#include "planner/block_costs.hpp"
#include "test_support.hpp"
#include "workloads/model.hpp"
#include "workloads/op_graph.hpp"

namespace hetsim {
namespace {

ModelSpec llama(GemmPrecision p, Recompute r = Recompute::kNone) {
  ModelSpec m = load_model(test::shipped("workloads", "llama2-7b"));
  m.training.gemm_precision = p;
  m.training.recompute = r;
  return m;
}


TEST(GemmPrecision, OnlyTheLayersLinearGemmsRunInTheLowFormat) {
  const OpGraph plain = build_op_graph(llama(GemmPrecision::kDtype), 1, DType::kBf16);
  const OpGraph fp8 = build_op_graph(llama(GemmPrecision::kFp8Delayed), 1, DType::kBf16);
  ASSERT_EQ(plain.ops.size(), fp8.ops.size());
  int low = 0;
  for (size_t i = 0; i < fp8.ops.size(); ++i) {
    const Op& a = plain.ops[i];
    const Op& b = fp8.ops[i];
    const bool in_layer = b.layer >= 0 && b.layer < fp8.layers;
    const bool expected = in_layer && b.kind == OpKind::kLinear;
    EXPECT_EQ(b.gemm_dtype.has_value(), expected) << b.name;
    if (!expected) {  // everything else as in the training dtype
      EXPECT_EQ(a.fwd_bytes, b.fwd_bytes) << b.name;
      EXPECT_EQ(a.saved_bytes, b.saved_bytes) << b.name;
      EXPECT_EQ(b.cast_fwd_bytes + b.cast_bwd_bytes, 0) << b.name;
      continue;
    }
    ++low;
    EXPECT_EQ(*b.gemm_dtype, DType::kFp8);
    EXPECT_EQ(a.fwd_flops, b.fwd_flops);  // model FLOPs do not change
  }
  EXPECT_EQ(low, 4 * 32);  // qkv, attn_out, mlp_gate_up, mlp_down in each of 32 layers
  EXPECT_FALSE(test::op_named(fp8, "lm_head").gemm_dtype.has_value());
}

TEST(GemmPrecision, CastsFollowTheRecipe) {
  // QKV of llama2-7b at micro-batch 1: x = 4096 tokens x 4096, dy = 4096 x 12288 (e = 2 bytes).
  // Delayed fp8 (q = 1): the norm writes both fp8 copies itself, 2q - e = 0 more bytes; the output
  // gradient is read and written twice, e + 2q = 4 bytes an element. Current scaling reads each
  // tensor once more for its amax and cannot fuse: x (2e + 2q) and dy (2e + 2q). MXFP8
  // (q = 1 + 1/32): the norm's extra 2q - e = 1/16 byte, dy e + 2q.
  const double x = 4096.0 * 4096, dy = 4096.0 * 3 * 4096;
  const Op& delayed = test::op_named(build_op_graph(llama(GemmPrecision::kFp8Delayed), 1, DType::kBf16), "layer0.qkv");
  EXPECT_DOUBLE_EQ(delayed.cast_fwd_bytes, 0);
  EXPECT_DOUBLE_EQ(delayed.cast_bwd_bytes, dy * 4);
  // The weight gradient reads the fp8 copy of x kept from the forward: 1 byte, not 2.
  EXPECT_DOUBLE_EQ(delayed.saved_bytes, x * 1);
  const Op& current = test::op_named(build_op_graph(llama(GemmPrecision::kFp8Current), 1, DType::kBf16), "layer0.qkv");
  EXPECT_DOUBLE_EQ(current.cast_fwd_bytes, x * 6);
  EXPECT_DOUBLE_EQ(current.cast_bwd_bytes, dy * 6);
  const Op& mx = test::op_named(build_op_graph(llama(GemmPrecision::kMxfp8), 1, DType::kBf16), "layer0.qkv");
  EXPECT_DOUBLE_EQ(mx.cast_fwd_bytes, x * (2 * (1 + 1.0 / 32) - 2));
  EXPECT_DOUBLE_EQ(mx.cast_bwd_bytes, dy * (2 + 2 * (1 + 1.0 / 32)));
  // NVFP4 (q = 1/2 + 1/16): the whole tensor's amax and its Hadamard transform's, then the rowwise
  // and the transformed columnwise casts, 3e + 2q, x too (the norm cannot cast it: the amax first).
  const Op& fp4 = test::op_named(build_op_graph(llama(GemmPrecision::kNvfp4), 1, DType::kBf16), "layer0.qkv");
  EXPECT_DOUBLE_EQ(fp4.cast_fwd_bytes, x * (6 + 2 * (0.5 + 1.0 / 16)));
  EXPECT_DOUBLE_EQ(fp4.cast_bwd_bytes, dy * (6 + 2 * (0.5 + 1.0 / 16)));
  // attn_out reads the attention's output, not a norm's: cast on its own, e + 2q.
  const Op& out = test::op_named(build_op_graph(llama(GemmPrecision::kFp8Delayed), 1, DType::kBf16), "layer0.attn_out");
  EXPECT_DOUBLE_EQ(out.cast_fwd_bytes, x * 4);
}

TEST(GemmPrecision, PerTensorFp8WritesNoTransposedCopyWhereItsGemmsTakeAnyLayout) {
  // The transposed copy's share of each cast: per-tensor scaled FP8 only (q = 1 byte an element);
  // delayed scaling's forward cast is the norm's, whose one or two copies cost it nothing more.
  const double x = 4096.0 * 4096, dy = 4096.0 * 3 * 4096;
  const auto qkv = [](GemmPrecision p) { return test::op_named(build_op_graph(llama(p), 1, DType::kBf16), "layer0.qkv"); };
  const Op delayed = qkv(GemmPrecision::kFp8Delayed), current = qkv(GemmPrecision::kFp8Current), mx = qkv(GemmPrecision::kMxfp8);
  EXPECT_DOUBLE_EQ(delayed.cast_fwd_transpose_bytes, 0);
  EXPECT_DOUBLE_EQ(delayed.cast_bwd_transpose_bytes, dy);
  EXPECT_DOUBLE_EQ(current.cast_fwd_transpose_bytes, x);
  EXPECT_DOUBLE_EQ(current.cast_bwd_transpose_bytes, dy);
  EXPECT_DOUBLE_EQ(mx.cast_fwd_transpose_bytes + mx.cast_bwd_transpose_bytes, 0);  // block scales: both copies
  // On a B200 (compute capability 10.0) the casts move those bytes less, at the memory roofline;
  // the same GPU said to take TN operands alone (as Hopper) writes them; MXFP8 is the same on both.
  const Device b200 = load_shipped_device("B200", Diagnostic{});
  ASSERT_TRUE(b200.fp8_any_layout);
  EXPECT_FALSE(load_shipped_device("H100-SXM5-80GB", Diagnostic{}).fp8_any_layout);
  Device tn_only = b200;
  tn_only.fp8_any_layout = false;
  const CostModel cost;  // roofline only
  const double bw = b200.memory_bandwidth_Bps * b200.efficiency.memory / (1 + b200.fitted.memory_bound_time_excess);
  for (Pass pass : {Pass::kForward, Pass::kBackward}) {
    const double saved = (pass == Pass::kForward ? x : dy) / bw;
    EXPECT_NEAR(cost.op_time(tn_only, current, DType::kBf16, pass).seconds - cost.op_time(b200, current, DType::kBf16, pass).seconds,
                saved, 1e-9 * saved);
    EXPECT_EQ(cost.op_time(tn_only, mx, DType::kBf16, pass).seconds, cost.op_time(b200, mx, DType::kBf16, pass).seconds);
  }
}

TEST(GemmPrecision, ATensorParallelRankCastsItsShareAndTransposesWhatItGathers) {
  // Llama 2 7B's qkv, one sequence of 4096: x is 4096 x 4096, dy 4096 x 12288. Current scaling's
  // unfused cast reads x twice (amax, cast) and writes two 1-byte copies: 6 bytes an element, 1 of
  // them the transposed copy.
  const double x = 4096.0 * 4096, dy = 4096.0 * 3 * 4096;
  const auto qkv = [](GemmPrecision p) { return test::op_named(build_op_graph(llama(p), 1, DType::kBf16), "layer0.qkv"); };
  const Op current = qkv(GemmPrecision::kFp8Current), mx = qkv(GemmPrecision::kMxfp8);
  ASSERT_DOUBLE_EQ(current.cast_fwd_bytes, 6 * x);
  ASSERT_DOUBLE_EQ(current.cast_bwd_bytes, 6 * dy);
  const int tp = 4;
  Op one = current;
  shard_casts(one, CastOperand::kWhole, CastOperand::kSplit, 1);  // no TP group: the whole op
  EXPECT_EQ(one.cast_fwd_bytes, current.cast_fwd_bytes);
  EXPECT_EQ(one.cast_bwd_bytes, current.cast_bwd_bytes);
  // Column-split without sequence parallelism: x whole on every rank, dy split.
  Op column = current;
  shard_casts(column, CastOperand::kWhole, CastOperand::kSplit, tp);
  EXPECT_DOUBLE_EQ(column.cast_fwd_bytes, 6 * x);
  EXPECT_DOUBLE_EQ(column.cast_fwd_transpose_bytes, x);
  EXPECT_DOUBLE_EQ(column.cast_bwd_bytes, 6 * dy / tp);
  EXPECT_DOUBLE_EQ(column.cast_bwd_transpose_bytes, dy / tp);
  // Under sequence parallelism x is cast rowwise 1/tp at a time (5 bytes an element), gathered in
  // FP8 and transposed whole in the backward (1 byte read, 1 written).
  Op gathered = current;
  shard_casts(gathered, CastOperand::kGathered, CastOperand::kSplit, tp);
  EXPECT_DOUBLE_EQ(gathered.cast_fwd_bytes, 5 * x / tp);
  EXPECT_DOUBLE_EQ(gathered.cast_fwd_transpose_bytes, 0);
  EXPECT_DOUBLE_EQ(gathered.cast_bwd_bytes, 6 * dy / tp + 2 * x);
  EXPECT_DOUBLE_EQ(gathered.cast_bwd_transpose_bytes, dy / tp + 2 * x);
  // MXFP8 casts both block-scaled copies before the gather: 1/tp of each cast, no transpose after.
  Op mx_gathered = mx;
  shard_casts(mx_gathered, CastOperand::kGathered, CastOperand::kGathered, tp);
  EXPECT_DOUBLE_EQ(mx_gathered.cast_fwd_bytes, mx.cast_fwd_bytes / tp);
  EXPECT_DOUBLE_EQ(mx_gathered.cast_bwd_bytes, mx.cast_bwd_bytes / tp);
  EXPECT_DOUBLE_EQ(mx_gathered.cast_bwd_transpose_bytes, 0);
  // An operator without a low-precision GEMM has no casts to share.
  Op plain = qkv(GemmPrecision::kDtype);
  shard_casts(plain, CastOperand::kGathered, CastOperand::kGathered, tp);
  EXPECT_EQ(plain.cast_bwd_bytes, 0);
}

TEST(GemmPrecision, OnH100TheGemmsRunAtTheFp8PeakAndTheRestIsUnchanged) {
  // Roofline (no measured fp8 rows yet): a compute-bound GEMM takes launch + F / (peak x eff);
  // in fp8 the same efficiency at the fp8 dense peak (1979 vs 989.4 TFLOP/s), plus its casts at the
  // memory roofline (bytes / (3.35 TB/s x 0.884) + launch, per tensor cast). Every other operator takes the same time.
  const Device h100 = load_shipped_device("H100-SXM5-80GB", Diagnostic{});
  const CostModel cost;  // roofline only
  // Under full recompute the backward repeats the forward GEMM and its input's cast.
  const double launch = h100.efficiency.kernel_launch_s;
  const double ratio = h100.peak(DType::kBf16) / h100.peak(DType::kFp8);
  const double bw = h100.memory_bandwidth_Bps * h100.efficiency.memory;
  for (Recompute r : {Recompute::kNone, Recompute::kFull}) {
    const OpGraph plain = build_op_graph(llama(GemmPrecision::kDtype, r), 1, DType::kBf16);
    const OpGraph fp8 = build_op_graph(llama(GemmPrecision::kFp8Delayed, r), 1, DType::kBf16);
    for (size_t i = 0; i < fp8.ops.size(); ++i) {
      for (Pass pass : {Pass::kForward, Pass::kBackward}) {
        const double a = cost.op_time(h100, plain.ops[i], DType::kBf16, pass).seconds;
        const double b = cost.op_time(h100, fp8.ops[i], DType::kBf16, pass).seconds;
        const Op& op = fp8.ops[i];
        if (!op.gemm_dtype) {
          EXPECT_EQ(a, b) << op.name;
          continue;
        }
        const bool again = pass == Pass::kBackward && op.recompute_flops > 0;
        // Each tensor's cast is a kernel of its own: the input's forward; the output gradient's
        // backward, and the input's again under recompute.
        const auto one_cast = [&](double bytes) { return bytes > 0 ? bytes / bw + launch : 0; };
        const double cast_s = pass == Pass::kForward ? one_cast(op.cast_fwd_bytes)
                                                     : one_cast(op.cast_bwd_bytes) + (again ? one_cast(op.cast_fwd_bytes) : 0);
        const int kernels = 1 + (again ? 1 : 0);  // the roofline counts one launch a pass (and one for recompute)
        EXPECT_NEAR(b - cast_s - kernels * launch, (a - kernels * launch) * ratio, 1e-9 * a) << op.name;
      }
    }
  }
}

TEST(GemmPrecision, ARecipeNeedsItsFormatOnEveryGpuType) {
  // pair-h100-mi300x with other GPUs in its two node types (dgx-h100, mi300x-node): a recipe runs
  // only where every type's device file lists the recipe's format among its peaks.
  const auto with_gpus = [](const char* first, const char* second) {
    Cluster c = test::shipped_cluster("pair-h100-mi300x");
    c.node_types[0].gpu = load_shipped_device(first, Diagnostic{});
    c.node_types[1].gpu = load_shipped_device(second, Diagnostic{});
    return c;
  };
  const auto refusal = [](GemmPrecision p, const Cluster& c) -> std::string {
    try {
      EXPECT_EQ(resolve_dtype(llama(p), c), DType::kBf16);  // the training dtype stays bf16
      return "";
    } catch (const InputError& e) {
      return e.what();
    }
  };
  // MXFP8: Blackwell and CDNA4; not Hopper.
  EXPECT_EQ(refusal(GemmPrecision::kMxfp8, with_gpus("B200", "MI355X")), "");
  EXPECT_EQ(refusal(GemmPrecision::kMxfp8, with_gpus("GB200", "B300")), "");
  EXPECT_NE(refusal(GemmPrecision::kMxfp8, with_gpus("H100-SXM5-80GB", "B200"))
                .find("mxfp8 needs tensor cores with MX block scaling (NVIDIA Blackwell, AMD CDNA4); H100-SXM5-80GB (node type "
                      "dgx-h100 of cluster pair-h100-mi300x) has no mxfp8 peak in its device file"),
            std::string::npos);
  EXPECT_NE(refusal(GemmPrecision::kMxfp8, with_gpus("B200", "MI325X")).find("MI325X (node type mi300x-node"), std::string::npos);
  // NVFP4: NVIDIA Blackwell only (CDNA4's 4-bit format is MXFP4).
  EXPECT_EQ(refusal(GemmPrecision::kNvfp4, with_gpus("B200", "GB300")), "");
  EXPECT_NE(refusal(GemmPrecision::kNvfp4, with_gpus("B200", "MI355X")).find("MI355X (node type mi300x-node of cluster "
                                                                                 "pair-h100-mi300x) has no nvfp4 peak"),
            std::string::npos);
  // Per-tensor fp8: Hopper, Ada, CDNA3 and later.
  EXPECT_EQ(refusal(GemmPrecision::kFp8Current, with_gpus("H20", "L40S")), "");
  EXPECT_EQ(refusal(GemmPrecision::kFp8Delayed, with_gpus("B200", "MI325X")), "");
}

TEST(GemmPrecision, WeightCopiesPerRecipe) {
  for (bool any_layout : {false, true}) {
    EXPECT_EQ(weight_copy_bytes(GemmPrecision::kDtype, any_layout), 0);
    // Per-tensor FP8: rowwise and transposed, but the rowwise copy alone where FP8 GEMMs take any layout.
    EXPECT_EQ(weight_copy_bytes(GemmPrecision::kFp8Delayed, any_layout), any_layout ? 1 : 2);
    EXPECT_EQ(weight_copy_bytes(GemmPrecision::kFp8Current, any_layout), any_layout ? 1 : 2);
    // Block scales run along K: the weight gradient's copy is another cast, on every GPU.
    EXPECT_EQ(weight_copy_bytes(GemmPrecision::kMxfp8, any_layout), 2 * (1 + 1.0 / 32));
    EXPECT_EQ(weight_copy_bytes(GemmPrecision::kNvfp4, any_layout), 2 * (0.5 + 1.0 / 16));
  }
  // llama2-7b: the layers' GEMM weights are 32 x (4 + 1 + 3 x 2.6875) x 4096^2 of 6.738 G parameters.
  const double layer_gemms = 32.0 * (4096.0 * 3 * 4096 + 4096.0 * 4096 + 3 * 4096.0 * 11008);
  const ModelSpec m = llama(GemmPrecision::kFp8Current);
  const OpGraph g = build_op_graph(m, 1, DType::kBf16);
  EXPECT_NEAR(gemm_precision_param_share(m), layer_gemms / g.params(), 1e-12);
}

}  // namespace
}  // namespace hetsim
