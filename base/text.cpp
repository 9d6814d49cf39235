// File: base/text.cpp
#include "base/text.hpp"

#include <cstdio>

#include <algorithm>
#include <cstdint>

namespace hetsim {

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
  std::string best;
  size_t best_d = SIZE_MAX;
  for (const std::string& c : candidates) {  // first of equal distance wins: candidates are ordered
    const size_t d = edit_distance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
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

}  // namespace hetsim
