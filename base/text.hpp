// File: base/text.hpp
// Small text helpers for user-facing messages: quoting, joining, "did you mean" suggestions,
// UTF-8 checks and escaping text from inputs before it reaches a terminal, table or CSV.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hetsim {

// Nothing but spaces and tabs (or nothing at all): a required text left empty.
[[nodiscard]] bool is_blank(std::string_view s);
// "word" with double quotes around it.
[[nodiscard]] std::string in_quotes(std::string_view s);
// prefix followed by the number, e.g. ("r", 3) -> "r3".
[[nodiscard]] std::string indexed_name(std::string_view prefix, size_t i);
// Items separated by ", ".
[[nodiscard]] std::string join(const std::vector<std::string>& items);
// "1 stage", "3 stages": a count and its noun, plural with an s.
[[nodiscard]] std::string counted(size_t n, const std::string& noun);
// One number through a printf format ("%.1f%%", "%.4g").
[[nodiscard]] std::string format_double(const char* format, double v);
// Edit distance, for suggestions.
[[nodiscard]] size_t edit_distance(std::string_view a, std::string_view b);
// The candidate nearest to `word` if it is a plausible typo of it, else empty.
[[nodiscard]] std::string nearest(std::string_view word, const std::vector<std::string>& candidates);
// "; did you mean "x"?" for the nearest candidate, or empty when none is near.
[[nodiscard]] std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

// Where `s` stops being valid UTF-8 (the offset of the first byte of a bad sequence: a stray
// continuation byte, a truncated sequence, an overlong form, a surrogate, a code point past
// U+10FFFF); nothing when all of it is valid.
[[nodiscard]] std::optional<size_t> utf8_error(std::string_view s);
// `s` safe to print anywhere: C0 and C1 control characters (ESC starts terminal escapes), DEL,
// the bidirectional overrides (U+202A-U+202E, U+2066-U+2069), invisible characters (U+00AD,
// U+061C, U+200B-U+200F, U+2060-U+2064, U+FEFF: two names that print alike are then told apart)
// and bytes that are not UTF-8 are written as escapes (\n, \t, \r, \xNN, \u{NNNN}); everything
// else is kept as it is.
[[nodiscard]] std::string printable(std::string_view s);
// One CSV cell: printable(s), in double quotes (doubled inside) when it holds a comma or a quote.
[[nodiscard]] std::string csv_field(std::string_view s);
// One Markdown table cell: printable(s) with '|' escaped, so a name cannot break the table.
[[nodiscard]] std::string markdown_cell(std::string_view s);

}  // namespace hetsim
