// File: kernels_profile/cost_model.cpp
#include "kernels_profile/cost_model.hpp"

#include <algorithm>

#include "base/data_dir.hpp"
#include "kernels_profile/fused_attention.hpp"

namespace hetsim {

namespace {

double roofline(const Device& d, double flops, double bytes, double flop_rate) {
  const double compute_s = flops / flop_rate;
  const double memory_s = bytes / (d.memory_bandwidth_Bps * d.efficiency.memory);
  return std::max(compute_s, memory_s) + d.efficiency.kernel_launch_s;
}

OpCost single(double seconds, CostSource source) {
  OpCost c;
  c.seconds = seconds;
  c.by_source[static_cast<int>(source)] = seconds;
  return c;
}

// The weakest of two sources: measured < interpolated < fitted < scaled (from another GPU) < roofline.
int rank(CostSource s) {
  switch (s) {
    case CostSource::kMeasured: return 0;
    case CostSource::kInterpolated: return 1;
    case CostSource::kFitted: return 2;
    case CostSource::kScaled: return 3;
    case CostSource::kRoofline: return 4;
    case CostSource::kLayerProfile: return 5;
    case CostSource::kCalibrated: return 6;
  }
  return 6;
}
CostSource weaker(CostSource a, CostSource b) { return rank(a) > rank(b) ? a : b; }

}  // namespace

std::string table_kernel(OpKind kind, Pass pass) {
  const std::string suffix = pass == Pass::kForward ? "_fwd" : "_bwd";
  switch (kind) {
    case OpKind::kLayerNorm:
    case OpKind::kRmsNorm: return "layernorm" + suffix;
    case OpKind::kSoftmax:
    case OpKind::kLoss: return "softmax" + suffix;
    case OpKind::kEmbedding: return "embedding" + suffix;
    case OpKind::kActivation:
    case OpKind::kResidual:
    case OpKind::kPool:
    case OpKind::kDropout: return "gelu" + suffix;  // elementwise: by bytes moved
    case OpKind::kMoeDispatch:
    case OpKind::kMoeCombine: return "copy";
    default: return "gemm";
  }
}

CostModel CostModel::shipped(const std::string& layer_profile_path) {
  auto tables = std::make_shared<KernelTables>(KernelTables::load_dir(data_root() / "kernels_profile" / "measured"));
  std::shared_ptr<const LayerProfiles> profiles;
  if (!layer_profile_path.empty()) profiles = std::make_shared<LayerProfiles>(LayerProfiles::load(layer_profile_path));
  return CostModel(std::move(tables), std::move(profiles));
}

double CostModel::roofline_s(const Device& device, const Op& op, DType dtype, Pass pass) const {
  if (op.kind == OpKind::kSsmScan) {
    // Mamba-2's convolution and SSD kernels (workloads/mamba_ops.cpp): their products are Triton dots
    // on the tensor cores, at the dtype's peak times the device's GEMM efficiency; their traffic at
    // the memory roofline; a launch per kernel (kernel_count). A stated model: no measured rows.
    const double rate = device.peak(dtype) * device.efficiency.matmul_of(dtype);
    const double flops = pass == Pass::kForward ? op.fwd_flops : op.bwd_flops + op.recompute_flops;
    const double bytes = pass == Pass::kForward ? op.fwd_bytes : op.bwd_bytes + (op.recompute_flops > 0 ? op.fwd_bytes : 0);
    return roofline(device, flops, bytes, rate) + (kernel_count(op, pass) - 1) * device.efficiency.kernel_launch_s;
  }
  if (!is_matmul(op.kind)) {  // other arithmetic at the fp32 vector peak
    const double rate = device.peak(DType::kFp32) * device.efficiency.vector;
    if (pass == Pass::kForward) return roofline(device, op.fwd_flops, op.fwd_bytes, rate);
    double s = roofline(device, op.bwd_flops, op.bwd_bytes, rate);
    if (op.recompute_flops > 0) s += roofline(device, op.recompute_flops, op.fwd_bytes, rate);
    return s;
  }
  // Matrix products at the dtype's tensor-core peak times the efficiency of their shape
  // (gemm_efficiency.hpp); an op without a shape at the device's efficiency.matmul (fp32 GEMMs:
  // matmul_fp32, where the device file gives it).
  const double peak = device.peak(dtype);
  const double at_reference = device.efficiency.matmul_of(dtype);
  auto seconds = [&](double flops, const GemmShape& g) {
    const double eff = g.m > 0 ? gemm_efficiency(device.gemm, at_reference, g, gemm_cores(dtype)) : at_reference;
    return flops / (peak * eff);
  };
  const GemmShape& g = op.gemm;
  const double memory_bw = device.memory_bandwidth_Bps * device.efficiency.memory;
  auto bounded = [&](double compute_s, double bytes) {
    return std::max(compute_s, bytes / memory_bw) + device.efficiency.kernel_launch_s;
  };
  const double frac = op.tile_fraction;  // causal flash attention: the tiles it computes; padded experts: > 1
  if (pass == Pass::kForward) return bounded(frac * seconds(op.fwd_flops, g), op.fwd_bytes);
  double compute_s = 0;
  if (op.kind == OpKind::kFlashAttention) {  // one fused kernel, scores recomputed inside
    compute_s = frac * seconds(op.bwd_flops + op.bwd_recompute_flops, g);
  } else {  // input gradient (b, m, k, n) and weight gradient (b, k, n, m), half the FLOPs each; a
            // padded expert GEMM runs its padding too (frac > 1)
    compute_s = frac * (seconds(0.5 * op.bwd_flops, {g.batch, g.m, g.k, g.n}) +
                        seconds(0.5 * op.bwd_flops, {g.batch, g.k, g.n, g.m}));
  }
  double s = bounded(compute_s, op.bwd_bytes);
  if (op.recompute_flops > 0) s += bounded(frac * seconds(op.recompute_flops, g), op.fwd_bytes);
  return s;
}

// Measured fused kernels (batch = b x heads, m = n = s, k = d): the causal rows where the op is
// causal and the table has them (under a sliding window scaled by its tiles over the causal ones),
// else the full-attention rows scaled by the share of tiles the op computes.
CostModel::Series CostModel::find(const Device& device, const std::string& kernel, DType dtype) const {
  if (const KernelSeries* s = tables_->find(device.name, kernel, dtype)) return {s, 1, false};
  const std::optional<Device::Borrowed> b = device.borrowed(dtype, is_shaped_kernel(kernel));
  if (!b) return {};
  const KernelSeries* s = tables_->find(device.kernels_from, kernel, b->dtype);
  return s != nullptr ? Series{s, b->scale, true, device.efficiency.kernel_launch_s, device.donor_kernel_launch_s} : Series{};
}

std::optional<KernelEstimate> CostModel::Series::gemm(const GemmShape& shape) const {
  return scaled(series != nullptr ? series->gemm(shape) : std::nullopt);
}

std::optional<KernelEstimate> CostModel::Series::by_bytes(double bytes) const {
  return scaled(series != nullptr ? series->by_bytes(bytes) : std::nullopt);
}

std::optional<KernelEstimate> CostModel::Series::scaled(std::optional<KernelEstimate> e) const {
  if (e && borrowed) {
    e->seconds = fixed_s + std::max(0.0, e->seconds - lender_fixed_s) * scale;
    e->source = CostSource::kScaled;
  }
  return e;
}

std::optional<KernelEstimate> CostModel::flash_attention(const Device& device, const Op& op, DType dtype, Pass pass) const {
  auto flash = [&](Pass p) -> std::optional<KernelEstimate> {
    const std::string suffix = p == Pass::kForward ? "_fwd" : "_bwd";
    // Of the full s x s tiles, the share the op's mask leaves (op.tile_fraction is per model FLOP).
    const double share = op.causal ? flash_tile_share(op.gemm.m, op.window) : 1.0;
    if (op.causal) {
      if (const Series c = find(device, "flash_attention_causal" + suffix, dtype); c.series != nullptr) {
        std::optional<KernelEstimate> e = c.gemm(op.gemm);
        if (e && op.window > 0) e->seconds *= share / flash_tile_share(op.gemm.m, 0);  // the band of the causal rows
        return e;
      }
    }
    std::optional<KernelEstimate> e = find(device, "flash_attention" + suffix, dtype).gemm(op.gemm);
    if (e) e->seconds *= share;
    return e;
  };
  // attention: fused: the FlashAttention-2 rows sped up by the published fused/flash ratio
  // (kernels_profile/fused_attention.hpp); as flash where none is published for this GPU.
  const FusedAttentionTable* fused = op.fused_attention ? fused_attention_for(device.name, device.kernels_from) : nullptr;
  auto timed = [&](Pass p) -> std::optional<KernelEstimate> {
    std::optional<KernelEstimate> e = flash(p);
    if (!e || fused == nullptr) return e;
    const double seq = static_cast<double>(op.gemm.m), head = static_cast<double>(op.gemm.k);
    if (const std::optional<double> r = fused->speedup(p == Pass::kBackward, op.causal, head, seq); r && *r > 0) {
      e->seconds /= *r;
      e->source = weaker(e->source, CostSource::kScaled);
    }
    return e;
  };
  std::optional<KernelEstimate> e = timed(pass);
  if (e && pass == Pass::kBackward && op.recompute_flops > 0) {  // full recompute repeats the forward kernel
    const std::optional<KernelEstimate> re = timed(Pass::kForward);
    if (!re) return std::nullopt;
    e->seconds += re->seconds;
    e->source = weaker(e->source, re->source);
  }
  return e;
}

// A product's kernels per pass direction: forward x·Wᵀ (bias in the epilogue), backward the data
// gradient dy·W and the weight gradient dyᵀ·x (a recomputed forward again). Each from the rows of
// the layout frameworks run (gemm_fwd / gemm_dgrad / gemm_wgrad; for experts the grouped kernels
// over all local experts, grouped_gemm_*), else from cuBLAS's NN rows (`gemm`) at that shape.
std::optional<KernelEstimate> CostModel::gemm_from_tables(const Device& device, const Op& op, DType dtype, Pass pass) const {
  const GemmShape& g = op.gemm;
  // Products with a weight (x·Wᵀ); attention's batched products and convolutions keep the NN rows.
  const bool weights = op.kind == OpKind::kLinear || op.kind == OpKind::kLmHead || op.kind == OpKind::kMoeExpert;
  enum Dir { kFwd, kDgrad, kWgrad };
  // Shapes in each kernel's row convention (kernels_profile/README.md): the NN table and hetsim's
  // op take the weight gradient as (k, n, m); the framework rows as dW[out x in] = (n, k, m); the
  // grouped rows put all local experts' rows (batch x m) in one dimension.
  auto estimate = [&](Dir dir) -> std::optional<KernelEstimate> {
    static constexpr const char* kSuffix[] = {"fwd", "dgrad", "wgrad"};
    if (op.kind == OpKind::kMoeExpert) {
      const long rows = g.batch * g.m;
      const GemmShape grouped[] = {{g.batch, rows, g.n, g.k}, {g.batch, rows, g.k, g.n}, {g.batch, g.n, g.k, rows}};
      if (auto e = find(device, std::string("grouped_gemm_") + kSuffix[dir], dtype).gemm(grouped[dir])) return e;
    }
    const GemmShape framework[] = {g, {g.batch, g.m, g.k, g.n}, {g.batch, g.n, g.k, g.m}};
    if (weights) {
      if (auto e = find(device, std::string("gemm_") + kSuffix[dir], dtype).gemm(framework[dir])) return e;
    }
    const GemmShape nn[] = {g, {g.batch, g.m, g.k, g.n}, {g.batch, g.k, g.n, g.m}};
    return find(device, "gemm", dtype).gemm(nn[dir]);
  };
  std::vector<Dir> dirs;
  if (pass == Pass::kForward) {
    dirs = {kFwd};
  } else {
    dirs = {kDgrad, kWgrad};
    if (op.recompute_flops > 0) dirs.push_back(kFwd);
  }
  KernelEstimate total{0, CostSource::kMeasured};
  for (const Dir d : dirs) {
    const std::optional<KernelEstimate> e = estimate(d);
    if (!e) return std::nullopt;
    total.seconds += e->seconds;
    total.source = weaker(total.source, e->source);
  }
  return total;
}

std::optional<KernelEstimate> CostModel::from_tables(const Device& device, const Op& op, DType dtype, Pass pass) const {
  if (tables_ == nullptr) return std::nullopt;
  if (op.kind == OpKind::kFlashAttention) return flash_attention(device, op, dtype, pass);
  if (op.kind == OpKind::kSsmScan) return std::nullopt;  // no measured rows: the roofline
  if (is_matmul(op.kind)) return gemm_from_tables(device, op, dtype, pass);
  std::optional<KernelEstimate> e = find(device, table_kernel(op.kind, pass), dtype).by_bytes(pass == Pass::kForward ? op.fwd_bytes : op.bwd_bytes);
  if (e && pass == Pass::kBackward && op.recompute_flops > 0) {
    const std::optional<KernelEstimate> re = find(device, table_kernel(op.kind, Pass::kForward), dtype).by_bytes(op.fwd_bytes);
    if (!re) return std::nullopt;
    e->seconds += re->seconds;
    e->source = weaker(e->source, re->source);
  }
  return e;
}

OpCost CostModel::op_time(const Device& device, const Op& op, DType dtype, Pass pass) const {
  // A GEMM of a low-precision recipe runs at its inputs' format (measured rows of that format, else
  // the roofline at its dense peak with the device's stated GEMM efficiency), and its casts as
  // memory-bound kernels of their own: the input's before the forward; before the backward the
  // output gradient's, and the input's again when the forward is recomputed.
  const DType gemm = op.gemm_dtype.value_or(dtype);
  OpCost c;
  if (const std::optional<KernelEstimate> e = from_tables(device, op, gemm, pass)) {
    c = single(device.slowdown * e->seconds, e->source);
  } else {
    c = single(device.slowdown * roofline_s(device, op, gemm, pass), CostSource::kRoofline);
  }
  // The framework's GEMMs against the kernel model (the calibration profile in force): the excess
  // said as calibrated. fp32 GEMMs run other kernels (SIMT cores), which the 16-bit and 8-bit runs
  // do not constrain: they take their own share.
  // Memory-bound kernels likewise take their own share.
  // Mamba's scan kernels (Triton dots and scans, neither a library GEMM nor a memory-bound kernel)
  // take theirs.
  const double memory_share = device.fitted.memory_bound_time_excess;
  const double share = op.kind == OpKind::kSsmScan ? device.fitted.ssm_scan_time_excess
                       : !is_matmul(op.kind)     ? memory_share
                       : gemm == DType::kFp32 ? device.fitted.fp32_gemm_time_excess
                       : block_scaled(gemm)   ? device.fitted.gemm_time_excess + device.fitted.block_scaled_gemm_time_excess
                                              : device.fitted.gemm_time_excess;
  if (share > 0) {
    const double excess = c.seconds * share;
    c.seconds += excess;
    c.by_source[static_cast<size_t>(CostSource::kCalibrated)] += excess;
  }
  // Each tensor's cast, a memory-bound kernel on the roofline. The tables' fp8_cast rows are not
  // used: they time PyTorch's torch.compile casts as kernels_profile/torch/layer_bench.py ran them
  // (on H200 at 160-400 GB/s; the same layer's amax kernels took 164 to 818 us from run to run,
  // docs/validation.md), not a training framework's fused cast-transpose.
  double kernels = kernel_count(op, pass);
  // `count` memory-bound kernels moving `bytes` in all, on the roofline (each with its launch).
  auto memory_kernels = [&](double bytes, int count) {
    if (bytes <= 0 || count <= 0) return;
    kernels += count;
    const double s = device.slowdown * (roofline(device, 0, bytes, 1) + (count - 1) * device.efficiency.kernel_launch_s);
    c.seconds += s * (1 + memory_share);
    c.by_source[static_cast<size_t>(CostSource::kRoofline)] += s;
    c.by_source[static_cast<size_t>(CostSource::kCalibrated)] += s * memory_share;
  };
  // Where FP8 GEMMs take any layout, per-tensor scaled casts write no transposed copy.
  const double cast_fwd = op.cast_fwd_bytes - (device.fp8_any_layout ? op.cast_fwd_transpose_bytes : 0);
  const double cast_bwd = op.cast_bwd_bytes - (device.fp8_any_layout ? op.cast_bwd_transpose_bytes : 0);
  if (pass == Pass::kForward) {
    memory_kernels(cast_fwd, 1);
  } else {
    memory_kernels(cast_bwd, 1);
    if (op.recompute_flops > 0) memory_kernels(cast_fwd, 1);
    // training.kernels: eager: autograd's bias-gradient sums and the QKV views' gradient assembly,
    // on the roofline (no table times strided copies or column sums; on an H200 the adds ran at it,
    // the fills at three quarters of it, the copies and sums at a quarter to two thirds of it:
    // kernels_profile/measured/layer-kernels).
    const EagerGradBytes eager = eager_grad_bytes(op, dtype_bytes(dtype));
    memory_kernels(eager.total(), eager.kernels);
  }
  // Megatron-Core's eager expert bias after this expert GEMM (workloads/op_graph.hpp), whatever
  // training.kernels says; a recomputed forward repeats its forward.
  if (op.eager_expert_bias) {
    const bool backward = pass == Pass::kBackward;
    const double e = dtype_bytes(dtype);
    const EagerGradBytes bias = eager_expert_bias_bytes(op, e, backward);
    memory_kernels(bias.total(), bias.kernels);
    if (backward && op.recompute_flops > 0) {
      const EagerGradBytes again = eager_expert_bias_bytes(op, e, false);
      memory_kernels(again.total(), again.kernels);
    }
  }
  // Each kernel's fixed cost beyond the kernel model (the calibration profile in force), said as calibrated.
  if (const double overhead = kernels * device.fitted.kernel_overhead_s; overhead > 0) {
    c.seconds += overhead;
    c.by_source[static_cast<size_t>(CostSource::kCalibrated)] += overhead;
  }
  // Host time the GPU waits for (the calibration profile in force): the operator takes the longer
  // of its kernels and the host's issuing them, the excess said as calibrated.
  const double host = host_time(device.fitted, op, pass);
  if (host > c.seconds) {
    c.by_source[static_cast<size_t>(CostSource::kCalibrated)] += host - c.seconds;
    c.seconds = host;
  }
  return c;
}

double kernel_count(const Op& op, Pass pass) {
  // A GEMM's backward is two (data and weight gradients), other kernels' one; one more with the
  // forward recomputed. Expert layers issue one GEMM per expert (Transformer Engine's grouped linear).
  const double per = op.kind == OpKind::kMoeExpert ? static_cast<double>(std::max(1L, op.gemm.batch)) : 1;
  // Mamba-2's scan: the convolution and mamba_ssm's five SSD kernels forward (chunk_cumsum,
  // chunk_state, state_passing, bmm_chunk, chunk_scan); backward the convolution and the states
  // again, then nine gradient kernels and the convolution's.
  if (op.kind == OpKind::kSsmScan) return pass == Pass::kForward ? 6 : 13 + (op.recompute_flops > 0 ? 6 : 0);
  if (pass == Pass::kForward) return per;
  const bool gemm = is_matmul(op.kind) && op.kind != OpKind::kFlashAttention;
  return per * ((gemm ? 2 : 1) + (op.recompute_flops > 0 ? 1 : 0));
}

double host_time(const FittedCosts& host, const Op& op, Pass pass) {
  // Forward once, backward twice (data and weight gradients), once more with the forward recomputed.
  const double passes = pass == Pass::kForward ? 1 : op.recompute_flops > 0 ? 3 : 2;
  if (op.kind == OpKind::kMoeExpert) return static_cast<double>(std::max(1L, op.gemm.batch)) * host.expert_gemm_s * passes;
  if (op.kind == OpKind::kMoeDispatch) return host.moe_layer_s * passes / 3;
  return 0;
}

OpCost CostModel::optimizer_time(const Device& device, double params, double traffic_per_param) const {
  // A memory-bound kernel: the calibration profile's share of it said as calibrated.
  OpCost c = single(device.slowdown * roofline(device, 10 * params, params * traffic_per_param,
                                               device.peak(DType::kFp32) * device.efficiency.vector),
                    CostSource::kRoofline);
  const double excess = c.seconds * device.fitted.memory_bound_time_excess;
  c.seconds += excess;
  c.by_source[static_cast<size_t>(CostSource::kCalibrated)] += excess;
  return c;
}

std::optional<LayerTimes> CostModel::layer_profile(const std::string& model, const std::string& device,
                                                   const std::string& block, long micro_batch) const {
  if (profiles_ == nullptr) return std::nullopt;
  return profiles_->lookup(model, device, block, micro_batch);
}

}  // namespace hetsim
