// File: base/text.cpp
#include "base/text.hpp"

#include <cstdio>

#include <algorithm>
#include <cctype>
#include <cstdint>

namespace hetsim {

bool is_blank(std::string_view s) { return s.find_first_not_of(" \t") == std::string_view::npos; }

std::string in_quotes(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  out.push_back('"');
  out.append(s);
  out.push_back('"');
  return out;
}

std::string indexed_name(std::string_view prefix, size_t i) {
  std::string out(prefix);
  out.append(std::to_string(i));
  return out;
}

std::string counted(size_t n, const std::string& noun) { return std::to_string(n) + " " + noun + (n == 1 ? "" : "s"); }

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) {
    if (!out.empty()) out += ", ";
    out += s;
  }
  return out;
}

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string nearest(std::string_view word, const std::vector<std::string>& candidates) {
  // The same name in other letter case ("EAGER", "bf16" for "BF16") is the one meant.
  const auto lower = [](std::string_view s) {
    std::string out(s);
    for (char& ch : out) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return out;
  };
  for (const std::string& c : candidates) {
    if (c != word && lower(c) == lower(word)) return c;
  }
  std::string best;
  size_t best_d = SIZE_MAX;
  for (const std::string& c : candidates) {  // first of equal distance wins: candidates are ordered
    const size_t d = edit_distance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  // A word that starts a name ("H100" of "H100-SXM5-80GB") means that name rather than another one
  // two letters away ("B200"): the shortest name it starts, unless one is a letter away.
  if (best_d > 1 && word.size() >= 3) {
    std::string start;
    for (const std::string& c : candidates) {
      if (c.size() > word.size() && c.starts_with(word) && (start.empty() || c.size() < start.size())) start = c;
    }
    if (!start.empty()) return start;
  }
  const size_t limit = std::max<size_t>(2, word.size() / 3);
  if (best_d <= limit) return best;
  // A long shared prefix also marks a typo ("oversubscribed" for "oversubscription").
  size_t best_prefix = 0;
  best.clear();
  for (const std::string& c : candidates) {
    size_t k = 0;
    while (k < c.size() && k < word.size() && c[k] == word[k]) ++k;
    if (k > best_prefix) {
      best_prefix = k;
      best = c;
    }
  }
  return best_prefix >= std::max<size_t>(5, word.size() / 2) ? best : std::string();
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  const std::string near = nearest(word, candidates);
  return near.empty() ? std::string() : "; did you mean " + in_quotes(near) + "?";
}

std::string format_double(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

namespace {

// The length of the valid UTF-8 sequence at s[i] and its code point; 0 when it is not valid.
size_t utf8_sequence(std::string_view s, size_t i, uint32_t& cp) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  size_t n = 0;
  uint32_t min = 0;
  if (c < 0x80) {
    cp = c;
    return 1;
  }
  if ((c & 0xE0) == 0xC0) {
    n = 2, cp = c & 0x1F, min = 0x80;
  } else if ((c & 0xF0) == 0xE0) {
    n = 3, cp = c & 0x0F, min = 0x800;
  } else if ((c & 0xF8) == 0xF0) {
    n = 4, cp = c & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(i + k) & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

}  // namespace

std::optional<size_t> utf8_error(std::string_view s) {
  uint32_t cp = 0;
  for (size_t i = 0; i < s.size();) {
    const size_t n = utf8_sequence(s, i, cp);
    if (n == 0) return i;
    i += n;
  }
  return std::nullopt;
}

std::string printable(std::string_view s) {
  const auto hex = [](const char* format, unsigned v) {
    char buf[16];
    std::snprintf(buf, sizeof buf, format, v);
    return std::string(buf);
  };
  std::string out;
  out.reserve(s.size());
  uint32_t cp = 0;
  for (size_t i = 0; i < s.size();) {
    const size_t n = utf8_sequence(s, i, cp);
    if (n == 0) {
      out += hex("\\x%02X", static_cast<unsigned char>(s[i]));
      ++i;
      continue;
    }
    if (cp == '\n') {
      out += "\\n";
    } else if (cp == '\t') {
      out += "\\t";
    } else if (cp == '\r') {
      out += "\\r";
    } else if (cp < 0x20 || cp == 0x7F) {
      out += hex("\\x%02X", cp);
    } else if ((cp >= 0x80 && cp <= 0x9F) || (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069) ||
               // Invisible: a soft hyphen, the Arabic letter mark, zero-width spaces and joiners, the
               // left-to-right and right-to-left marks, word joiners, a byte-order mark.
               cp == 0xAD || cp == 0x61C || (cp >= 0x200B && cp <= 0x200F) || (cp >= 0x2060 && cp <= 0x2064) || cp == 0xFEFF) {
      out += hex("\\u{%04X}", cp);
    } else {
      out.append(s.substr(i, n));
    }
    i += n;
  }
  return out;
}

std::string csv_field(std::string_view s) {
  const std::string p = printable(s);  // no raw newline: one row is one line
  if (p.find_first_of(",\"") == std::string::npos) return p;
  std::string out = "\"";
  for (char c : p) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string markdown_cell(std::string_view s) {
  std::string out;
  for (char c : printable(s)) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

}  // namespace hetsim
