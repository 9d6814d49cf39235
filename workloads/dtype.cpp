// File: workloads/dtype.cpp
#include "workloads/dtype.hpp"

#include <array>
#include <utility>

namespace hetsim {
namespace {
constexpr std::array<std::pair<DType, std::string_view>, 9> kNames{{{DType::kFp32, "fp32"},
                                                                    {DType::kTf32, "tf32"},
                                                                    {DType::kFp16, "fp16"},
                                                                    {DType::kBf16, "bf16"},
                                                                    {DType::kFp8, "fp8"},
                                                                    {DType::kMxfp8, "mxfp8"},
                                                                    {DType::kNvfp4, "nvfp4"},
                                                                    {DType::kMxfp6, "mxfp6"},
                                                                    {DType::kMxfp4, "mxfp4"}}};
}

double dtype_bytes(DType t) {
  switch (t) {
    case DType::kFp32:
    case DType::kTf32: return 4;
    case DType::kFp16:
    case DType::kBf16: return 2;
    case DType::kFp8: return 1;
    case DType::kMxfp8: return 1 + 1.0 / 32;
    case DType::kNvfp4: return 0.5 + 1.0 / 16;
    case DType::kMxfp6: return 0.75 + 1.0 / 32;
    case DType::kMxfp4: return 0.5 + 1.0 / 32;
  }
  return 4;
}

const std::vector<std::string>& dtype_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (DType t : kAllDTypes) out.emplace_back(dtype_name(t));
    return out;
  }();
  return names;
}

bool block_scaled(DType t) { return t == DType::kMxfp8 || t == DType::kNvfp4 || t == DType::kMxfp6 || t == DType::kMxfp4; }

std::string_view dtype_name(DType t) {
  for (const auto& [d, n] : kNames) {
    if (d == t) return n;
  }
  return "?";
}

std::optional<DType> dtype_from_name(std::string_view name) {
  for (const auto& [d, n] : kNames) {
    if (n == name) return d;
  }
  return std::nullopt;
}

}  // namespace hetsim
