// File: base/iso_date.cpp
#include "base/iso_date.hpp"

#include <cctype>
#include <ctime>

namespace hetsim {
namespace {

// The number of `n` digits at `pos`, or -1.
int digits(std::string_view s, size_t pos, size_t n) {
  if (pos + n > s.size()) return -1;
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (std::isdigit(static_cast<unsigned char>(s[i])) == 0) return -1;
    v = v * 10 + (s[i] - '0');
  }
  return v;
}

}  // namespace

std::string iso_date_problem(std::string_view s) {
  constexpr const char* kForm = " is not a date; write YYYY-MM-DD or YYYY-MM, optionally with a time (2026-11-23T01:00:08Z)";
  const int year = digits(s, 0, 4), month = digits(s, 5, 2);
  if (year < 0 || month < 0 || s[4] != '-') return kForm;
  if (year < 2000 || year > 2100) return " is not a year of GPU measurements or prices (2000 to 2100)";
  if (month < 1 || month > 12) return " has no month " + std::to_string(month);
  if (s.size() == 7) return {};  // month precision (ISO 8601 "2026-05"), as prices are quoted
  const int day = digits(s, 8, 2);
  if (day < 0 || s[7] != '-') return kForm;
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  if (day < 1 || day > kDays[month - 1] + (month == 2 && leap ? 1 : 0)) return " has no day " + std::to_string(day) + " in its month";
  if (s.size() == 10) return {};
  // A time: Thh:mm[:ss[.fraction]] and an optional zone, Z or ±hh:mm.
  if (s[10] != 'T' && s[10] != ' ') return kForm;
  const int hour = digits(s, 11, 2), minute = digits(s, 14, 2);
  if (hour < 0 || minute < 0 || s[13] != ':' || hour > 23 || minute > 59) return kForm;
  size_t p = 16;
  if (p < s.size() && s[p] == ':') {
    const int second = digits(s, p + 1, 2);
    if (second < 0 || second > 60) return kForm;
    p += 3;
    if (p < s.size() && s[p] == '.') {
      ++p;
      const size_t first = p;
      while (p < s.size() && std::isdigit(static_cast<unsigned char>(s[p])) != 0) ++p;
      if (p == first) return kForm;
    }
  }
  if (p == s.size()) return {};
  if (s[p] == 'Z' && p + 1 == s.size()) return {};
  if ((s[p] == '+' || s[p] == '-') && p + 6 == s.size() && s[p + 3] == ':' && digits(s, p + 1, 2) >= 0 && digits(s, p + 1, 2) <= 14 &&
      digits(s, p + 4, 2) >= 0 && digits(s, p + 4, 2) <= 59) {
    return {};
  }
  return kForm;
}

std::string utc_today() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &utc);
  return buf;
}

}  // namespace hetsim
