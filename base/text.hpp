// File: base/text.hpp
// Small text helpers for user-facing messages: quoting, joining, "did you mean" suggestions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace hetsim {

// "word" with double quotes around it.
[[nodiscard]] std::string in_quotes(std::string_view s);
// prefix followed by the number, e.g. ("r", 3) -> "r3".
[[nodiscard]] std::string indexed_name(std::string_view prefix, size_t i);
// Items separated by ", ".
[[nodiscard]] std::string join(const std::vector<std::string>& items);
// One number through a printf format ("%.1f%%", "%.4g").
[[nodiscard]] std::string format_double(const char* format, double v);
// Edit distance, for suggestions.
[[nodiscard]] size_t edit_distance(std::string_view a, std::string_view b);
// The candidate nearest to `word` if it is a plausible typo of it, else empty.
[[nodiscard]] std::string nearest(std::string_view word, const std::vector<std::string>& candidates);
// "; did you mean "x"?" for the nearest candidate, or empty when none is near.
[[nodiscard]] std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace hetsim
