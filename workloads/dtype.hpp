// File: workloads/dtype.hpp
// Numeric formats a model trains in, and their storage sizes.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace hetsim {

// kMxfp8 (OCP MX: E4M3 elements, one 8-bit power-of-two scale per 32) and kNvfp4 (E2M1 elements,
// one E4M3 scale per 16, plus a per-tensor fp32 scale) are GEMM input formats only (device peaks,
// training.gemm_precision), never a model's training dtype.
enum class DType { kFp32, kTf32, kFp16, kBf16, kFp8, kMxfp8, kNvfp4 };

// Bytes per element as stored in memory (tf32 is stored as fp32; block-scaled formats with their
// scales: mxfp8 1 + 1/32, nvfp4 1/2 + 1/16).
[[nodiscard]] double dtype_bytes(DType t);
[[nodiscard]] std::string_view dtype_name(DType t);
[[nodiscard]] std::optional<DType> dtype_from_name(std::string_view name);

}  // namespace hetsim
