// File: workloads/gemm_precision.cpp
// Cast traffic per recipe, per element of a cast tensor (e = bytes of the training dtype; q = bytes
// of one low-precision copy with its scales: fp8 1, mxfp8 1 + 1/32, nvfp4 1/2 + 1/16):
//   every recipe reads the tensor (e) and writes two copies (2q): rowwise for the GEMM that reads it
//   as is, columnwise (transposed on Hopper, column-blocked under MX) for the weight gradient, as
//   TE's fused cast-transpose kernels do;
//   fp8-current reads the tensor once more for its amax before casting (e);
//   per-tensor scaled FP8 (fp8-delayed, fp8-current) writes the transposed copy only where FP8
//   GEMMs take TN operands alone: on GPUs whose FP8 GEMMs take any layout (Device::fp8_any_layout:
//   Blackwell, compute capability 10.x) Transformer Engine makes none (its quantizer creates the
//   transpose only when nvte_is_non_tn_fp8_gemm_supported() is false) and the backward's GEMMs read
//   the rowwise copy transposed; the cost model leaves out Op::cast_*_transpose_bytes there. Block
//   scales (mxfp8, nvfp4) run along the GEMM's K, so the weight gradient's copy is another cast;
//   nvfp4 reads the tensor three times (3e): its two-level scales need the whole tensor's amax and
//   that of its random Hadamard transform first (one kernel, nvte_hadamard_transform_amax), then the
//   rowwise copy is cast from the tensor and the columnwise one from its transform (Transformer
//   Engine v2.12, pytorch/csrc/quantizer.cpp NVFP4Quantizer::quantize_impl; the recipe transforms the
//   inputs and output gradients, recipe/__init__.py NVFP4BlockScaling).
// A GEMM whose input comes straight from a norm (QKV, the first MLP projection) gets it cast by the
// norm kernel itself (TE's LayerNormLinear writes the low-precision copies instead of its output)
// where the scale is known beforehand or found per block: only the copies' bytes beyond the norm's
// own output are added. Current scaling needs the whole tensor's amax first: no fusion; nor nvfp4's
// (with the transform's amax the norm writes its output and the quantizer casts it, Transformer
// Engine v2.12 pytorch/csrc/extensions/normalization.cpp, Impl::UNFUSED).
// The forward casts the input x (rows x k elements), the backward the output gradient dy (rows x n).
// Weights are cast once per iteration (planner: optimizer traffic), not per micro-batch (TE caches
// them from the first micro-batch on). Amax reductions across TP and DP groups (a few scalars per
// tensor) are left out.
#include "workloads/gemm_precision.hpp"

#include <algorithm>

#include "workloads/model.hpp"
#include "workloads/op_graph.hpp"

namespace hetsim {

std::string_view gemm_precision_name(GemmPrecision p) {
  switch (p) {
    case GemmPrecision::kDtype: return "dtype";
    case GemmPrecision::kFp8Delayed: return "fp8-delayed";
    case GemmPrecision::kFp8Current: return "fp8-current";
    case GemmPrecision::kMxfp8: return "mxfp8";
    case GemmPrecision::kNvfp4: return "nvfp4";
  }
  return "?";
}

const std::vector<std::string>& gemm_recipe_names() {
  static const std::vector<std::string> names{"fp8-delayed", "fp8-current", "mxfp8", "nvfp4"};
  return names;
}

std::optional<GemmPrecision> gemm_recipe_from_name(std::string_view name) {
  for (GemmPrecision p : {GemmPrecision::kFp8Delayed, GemmPrecision::kFp8Current, GemmPrecision::kMxfp8, GemmPrecision::kNvfp4}) {
    if (gemm_precision_name(p) == name) return p;
  }
  return std::nullopt;
}

std::optional<DType> gemm_input_format(GemmPrecision p) {
  switch (p) {
    case GemmPrecision::kDtype: return std::nullopt;
    case GemmPrecision::kFp8Delayed:
    case GemmPrecision::kFp8Current: return DType::kFp8;
    case GemmPrecision::kMxfp8: return DType::kMxfp8;
    case GemmPrecision::kNvfp4: return DType::kNvfp4;
  }
  return std::nullopt;
}

std::string gemm_format_hardware(GemmPrecision p) {
  switch (gemm_input_format(p).value_or(DType::kBf16)) {
    case DType::kFp8: return "fp8 tensor cores (NVIDIA Hopper or Ada, AMD CDNA3, or later)";
    case DType::kMxfp8: return "tensor cores with MX block scaling (NVIDIA Blackwell, AMD CDNA4)";
    case DType::kNvfp4: return "NVFP4 tensor cores (NVIDIA Blackwell)";
    default: return "";
  }
}

namespace {

// Whether `op` runs its GEMMs in the recipe's format, where layers 0 .. `layers`-1 do: linear layers
// inside those layers (not the router, which Megatron-Core keeps in the training dtype or fp32) and
// expert GEMMs.
bool uses_gemm_precision(const Op& op, long layers) {
  if (op.layer < 0 || op.layer >= layers) return false;  // embedding, output layer and loss
  if (op.kind == OpKind::kMoeExpert) return true;
  if (op.kind != OpKind::kLinear) return false;
  const std::string_view n = op.name;
  const auto ends = [&](std::string_view s) { return n.size() >= s.size() && n.substr(n.size() - s.size()) == s; };
  return !ends(".router") && !ends(".moe_gate");
}

}  // namespace

long gemm_precision_layers(const ModelSpec& m) { return m.training.mtp_in_dtype ? main_layers(m) : m.layers; }

const std::vector<std::string>& gemm_op_names() {
  static const std::vector<std::string> names{"qkv",        "q_down",     "q_up",        "q_proj",        "kv_down",
                                              "kv_up",      "attn_out",   "mlp_up",      "mlp_gate_up",   "mlp_down",
                                              "expert_fc1", "expert_fc2", "shared_fc1",  "shared_fc2",    "moe_latent_in",
                                              "moe_latent_out", "mamba_in", "mamba_out"};
  return names;
}

GemmPrecision gemm_precision_of(const ModelSpec& m, const Op& op) {
  const TrainingSpec& t = m.training;
  if (!t.low_precision_gemms() || !uses_gemm_precision(op, gemm_precision_layers(m))) return GemmPrecision::kDtype;
  const long decoder = main_layers(m);
  if (op.layer < t.dtype_layers_first || (op.layer < decoder && op.layer >= decoder - t.dtype_layers_last)) return GemmPrecision::kDtype;
  if (!t.gemm_precision_by_op.empty()) {
    const size_t dot = op.name.find('.');
    const std::string_view own = dot == std::string::npos ? std::string_view(op.name) : std::string_view(op.name).substr(dot + 1);
    for (const auto& [name, p] : t.gemm_precision_by_op) {
      if (name == own) return p;
    }
  }
  return t.gemm_precision;
}

std::vector<GemmPrecision> gemm_recipes_used(const TrainingSpec& t) {
  std::vector<GemmPrecision> out;
  if (!t.low_precision_gemms()) return out;
  out.push_back(t.gemm_precision);
  for (const auto& [name, p] : t.gemm_precision_by_op) {
    if (p != GemmPrecision::kDtype && std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
  }
  return out;
}

namespace {

double copy_bytes(GemmPrecision p) { return dtype_bytes(gemm_input_format(p).value_or(DType::kFp32)); }

// Per-tensor scaled FP8: the recipes whose columnwise copy is a plain transpose, which GPUs whose FP8
// GEMMs take any layout do without.
bool per_tensor_fp8(GemmPrecision p) { return p == GemmPrecision::kFp8Delayed || p == GemmPrecision::kFp8Current; }

}  // namespace

double weight_copy_bytes(GemmPrecision p, bool fp8_any_layout) {
  if (p == GemmPrecision::kDtype) return 0;
  return (per_tensor_fp8(p) && fp8_any_layout ? 1 : 2) * copy_bytes(p);
}

namespace {

// One op's GEMMs in `p`'s format, with the casts around them.
void apply_to_op(const OpGraph& graph, Op& op, GemmPrecision p, double e) {
  const std::optional<DType> format = gemm_input_format(p);
  if (!format) return;
  const double q = copy_bytes(p);
  const double extra_read = p == GemmPrecision::kFp8Current ? e : p == GemmPrecision::kNvfp4 ? 2 * e : 0;
  const bool norm_fuses = p != GemmPrecision::kFp8Current && p != GemmPrecision::kNvfp4;  // both need a whole-tensor amax first
  const double unfused = e + 2 * q + extra_read;               // per element cast on its own
  const double fused = std::max(0.0, 2 * q - e) + extra_read;  // cast by the norm that produced it
  // The transposed copy's share of each, for per-tensor scaled FP8 (above): one copy written, or
  // what the norm writes beyond its own output with two copies rather than one.
  const bool transposed = per_tensor_fp8(p);
  const double unfused_transpose = transposed ? q : 0;
  const double fused_transpose = transposed ? std::max(0.0, 2 * q - e) - std::max(0.0, q - e) : 0;
  const double rows = static_cast<double>(op.gemm.batch) * static_cast<double>(op.gemm.m);
  const double x = rows * static_cast<double>(op.gemm.k), dy = rows * static_cast<double>(op.gemm.n);
  const bool from_norm = !op.inputs.empty() && norm_fuses &&
                         (graph.ops[op.inputs[0]].kind == OpKind::kLayerNorm || graph.ops[op.inputs[0]].kind == OpKind::kRmsNorm);
  const double w = static_cast<double>(op.gemm.batch) * static_cast<double>(op.gemm.k) * static_cast<double>(op.gemm.n);
  op.gemm_dtype = format;
  op.cast_fwd_bytes = x * (from_norm ? fused : unfused);
  op.cast_bwd_bytes = dy * unfused;
  op.cast_fwd_transpose_bytes = x * (from_norm ? fused_transpose : unfused_transpose);
  op.cast_bwd_transpose_bytes = dy * unfused_transpose;
  // The GEMMs' own traffic: low-precision operands, outputs (y, dx, dW) in the dtype.
  op.fwd_bytes = (x + w) * q + dy * e;
  op.bwd_bytes = (2 * dy + w + x) * q + (x + w) * e;
  // The GEMMs read their inputs in the low format; the weight gradient reads the columnwise
  // copy of x, kept from the forward instead of x itself.
  op.saved_bytes *= q / e;
}

}  // namespace

void apply_gemm_precision(OpGraph& graph, const ModelSpec& model, double e) {
  if (!model.training.low_precision_gemms()) return;
  for (Op& op : graph.ops) apply_to_op(graph, op, gemm_precision_of(model, op), e);
}

void shard_casts(Op& op, CastOperand x, CastOperand dy, int tp) {
  if (tp <= 1 || !op.gemm_dtype) return;
  const double f = 1.0 / tp, rows = static_cast<double>(op.gemm.batch) * static_cast<double>(op.gemm.m);
  // Per-tensor FP8's columnwise copy is a plain transpose, of the gathered tensor once it is whole.
  const double transpose_per_element = *op.gemm_dtype == DType::kFp8 ? 2 * dtype_bytes(DType::kFp8) : 0;
  double regathered_transpose = 0;
  const auto share = [&](double& cast, double& transpose, CastOperand how, double elements) {
    if (how == CastOperand::kWhole) return;
    if (how == CastOperand::kGathered) {
      cast -= transpose;  // each rank casts the rowwise data (block-scaled: both copies) of its 1/tp
      transpose = 0;
      regathered_transpose += transpose_per_element * elements;
    }
    cast *= f;
    transpose *= f;
  };
  share(op.cast_fwd_bytes, op.cast_fwd_transpose_bytes, x, rows * static_cast<double>(op.gemm.k));
  share(op.cast_bwd_bytes, op.cast_bwd_transpose_bytes, dy, rows * static_cast<double>(op.gemm.n));
  op.cast_bwd_bytes += regathered_transpose;
  op.cast_bwd_transpose_bytes += regathered_transpose;
}

std::vector<std::pair<GemmPrecision, double>> gemm_precision_param_shares(const ModelSpec& model) {
  std::vector<std::pair<GemmPrecision, double>> out;
  if (!model.training.low_precision_gemms()) return out;
  const OpGraph g = build_op_graph(model, 1, model.training.dtype);
  double all = 0;
  for (const Op& op : g.ops) {
    all += op.params;
    const GemmPrecision p = gemm_precision_of(model, op);
    if (p == GemmPrecision::kDtype) continue;
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& s) { return s.first == p; });
    if (it == out.end()) it = out.insert(out.end(), {p, 0.0});
    it->second += op.params;
  }
  for (auto& [p, params] : out) params = all > 0 ? params / all : 0;
  return out;
}

double gemm_precision_param_share(const ModelSpec& model) {
  double share = 0;
  for (const auto& [p, s] : gemm_precision_param_shares(model)) share += s;
  return share;
}

double weight_copy_bytes_per_param(const ModelSpec& model, bool fp8_any_layout) {
  double bytes = 0;
  for (const auto& [p, s] : gemm_precision_param_shares(model)) bytes += weight_copy_bytes(p, fp8_any_layout) * s;
  return bytes;
}

}  // namespace hetsim
