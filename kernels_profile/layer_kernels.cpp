// File: kernels_profile/layer_kernels.cpp
#include "kernels_profile/layer_kernels.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <string>

#include "base/csv_reader.hpp"
#include "base/text.hpp"

namespace hetsim {

std::string_view kernel_class_name(KernelClass c) {
  static constexpr std::string_view kNames[kKernelClasses] = {"gemm", "attention", "norm",      "activation", "residual add",
                                                              "fp8 cast", "copy", "bias grad", "fill", "other"};
  return kNames[static_cast<int>(c)];
}

KernelClass classify_kernel(std::string_view name) {
  std::string n(name);
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  auto has = [&](std::initializer_list<std::string_view> words) {
    return std::any_of(words.begin(), words.end(), [&](std::string_view w) { return n.find(w) != std::string::npos; });
  };
  // Order matters: flash kernels are CUTLASS templates, and Triton names its fused casts after the
  // operations in them (abs_amax, _to_copy, clone_t).
  if (has({"flash", "fmha"})) return KernelClass::kAttention;
  if (has({"triton_", "amax", "cast_transpose", "quantize"})) return KernelClass::kCast;
  if (has({"layer_norm", "layernorm", "gammabeta", "rms_norm", "rmsnorm"})) return KernelClass::kNorm;
  if (has({"gelu", "silu", "swiglu", "geglu"})) return KernelClass::kActivation;
  if (has({"nvjet", "gemm", "xmma", "cutlass", "cublas"})) return KernelClass::kGemm;
  if (has({"direct_copy", "copy_kernel", "memcpy"})) return KernelClass::kCopy;
  if (has({"reduce_kernel"})) return KernelClass::kBiasGrad;
  if (has({"fillfunctor", "memset"})) return KernelClass::kFill;
  if (has({"functor_add", "add_kernel"})) return KernelClass::kResidual;
  return KernelClass::kOther;
}

KernelClass op_kernel_class(OpKind kind) {
  switch (kind) {
    case OpKind::kLinear:
    case OpKind::kLmHead:
    case OpKind::kAttnScores:
    case OpKind::kAttnContext:
    case OpKind::kMoeExpert:
    case OpKind::kConv2d: return KernelClass::kGemm;
    case OpKind::kFlashAttention: return KernelClass::kAttention;
    case OpKind::kLayerNorm:
    case OpKind::kRmsNorm: return KernelClass::kNorm;
    case OpKind::kActivation: return KernelClass::kActivation;
    case OpKind::kResidual: return KernelClass::kResidual;
    default: return KernelClass::kOther;
  }
}

std::vector<LayerKernels> load_layer_kernels(const std::filesystem::path& file) {
  const std::vector<std::string> columns{"device", "hidden",  "heads", "ffn_hidden", "seq_len", "micro_batch", "dtype",     "pass", "kernel",
                                         "calls",  "seconds", "gpu",   "driver",     "clock_mhz", "date",      "attention", "timing"};
  enum Col { kDevice, kHidden, kHeads, kFfn, kSeq, kMb, kDtype, kPass, kKernel, kCalls, kSeconds, kGpu, kDriver, kClock, kDate, kAttention, kTiming };
  const LayerColumns cols{kDevice, kHidden, kHeads, kFfn, kSeq, kMb, kDtype, kGpu, kDate, kAttention};
  LayerRowReader reader(file);
  std::vector<LayerKernels> out;
  std::map<std::string, size_t> index;  // layer and timing -> out
  std::map<std::string, int> seen;      // layer, timing, pass and kernel -> its line
  read_csv(file, columns, [&](const CsvRow& row) {
    const std::optional<LayerMeasurement> m = reader.read(row, cols);
    const std::string& pass = row.text(kPass);
    if (pass != "fwd" && pass != "bwd") row.error(kPass, in_quotes(pass) + " is not fwd or bwd");
    const std::string& kernel = row.required(kKernel, "the GPU kernel's name");
    const auto calls = row.number(kCalls, 0, true, 1e6);
    const auto seconds = row.number(kSeconds, 0, true, 3600);
    const std::string& timing = row.text(kTiming);
    if (timing != "eager" && timing != "graphs") row.error(kTiming, in_quotes(timing) + " is not eager or graphs");
    if (!m || kernel.empty() || !calls || !seconds || (pass != "fwd" && pass != "bwd") || (timing != "eager" && timing != "graphs")) return;
    const std::string key = layer_key(*m) + " " + timing;
    if (const auto [at, fresh] = seen.emplace(key + " " + pass + " " + kernel, row.line()); !fresh) {
      row.error(kKernel, "a second row for this kernel in this layer's " + pass + " pass (the first is at line " +
                             std::to_string(at->second) + ")");
      return;
    }
    const auto [it, fresh] = index.emplace(key, out.size());
    if (fresh) out.push_back(LayerKernels{*m, timing == "graphs", {}, 0});
    LayerKernels& lk = out[it->second];
    const int p = pass == "fwd" ? 0 : 1;
    lk.measured[p][static_cast<int>(classify_kernel(kernel))] += *seconds;
    (p == 0 ? lk.layer.fwd_s : lk.layer.bwd_s) += *seconds;
    ++lk.kernels;
  });
  return out;
}

}  // namespace hetsim
