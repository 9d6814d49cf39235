// File: workloads/dtype.hpp
// Numeric formats a model trains in, and their storage sizes.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace hetsim {

enum class DType { kFp32, kTf32, kFp16, kBf16, kFp8 };

// Bytes per element as stored in memory (tf32 is stored as fp32).
[[nodiscard]] double dtype_bytes(DType t);
[[nodiscard]] std::string_view dtype_name(DType t);
[[nodiscard]] std::optional<DType> dtype_from_name(std::string_view name);

}  // namespace hetsim
