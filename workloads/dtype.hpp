// File: workloads/dtype.hpp
// Numeric formats a model trains in, and their storage sizes.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hetsim {

// kMxfp8 (OCP MX: E4M3 elements, one 8-bit power-of-two scale per 32) and kNvfp4 (E2M1 elements,
// one E4M3 scale per 16, plus a per-tensor fp32 scale) are GEMM input formats only (device peaks,
// training.gemm_precision), never a model's training dtype. kMxfp6 (E2M3/E3M2 elements) and kMxfp4
// (E2M1 elements), each with one 8-bit power-of-two scale per 32 (OCP MX), are device peaks only:
// a device file states them (AMD CDNA4 runs them at twice its fp8 rate, NVIDIA Blackwell at its fp8
// and fp4 rates), no training recipe uses them yet.
enum class DType { kFp32, kTf32, kFp16, kBf16, kFp8, kMxfp8, kNvfp4, kMxfp6, kMxfp4 };
// Every format, in the enum's order.
inline constexpr std::array<DType, 9> kAllDTypes{DType::kFp32,  DType::kTf32,  DType::kFp16,  DType::kBf16, DType::kFp8,
                                                 DType::kMxfp8, DType::kNvfp4, DType::kMxfp6, DType::kMxfp4};

// Bytes per element as stored in memory (tf32 is stored as fp32; block-scaled formats with their
// scales: mxfp8 1 + 1/32, nvfp4 1/2 + 1/16, mxfp6 3/4 + 1/32, mxfp4 1/2 + 1/32).
[[nodiscard]] double dtype_bytes(DType t);
[[nodiscard]] std::string_view dtype_name(DType t);
[[nodiscard]] std::optional<DType> dtype_from_name(std::string_view name);
// The names of kAllDTypes, in that order (a file field that takes any format).
[[nodiscard]] const std::vector<std::string>& dtype_names();
// Whether elements of `t` carry block scales (mxfp8, nvfp4, mxfp6, mxfp4).
[[nodiscard]] bool block_scaled(DType t);

}  // namespace hetsim
