// File: base/units.cpp
// Unit tables and the quantity parser; the only place where unit strings become numbers.
#include "base/units.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <optional>

#include "base/text.hpp"

namespace hetsim {
namespace {

constexpr double kSecondsPerYear = 365.25 * 86400.0;  // the Julian year

struct Prefix {
  std::string_view text;
  double factor;
};

// Longest prefixes first so that "Ki" is tried before "K".
constexpr std::array<Prefix, 17> kPrefixes{{
    {"Ki", 1024.0},
    {"Mi", 1048576.0},
    {"Gi", 1073741824.0},
    {"Ti", 1099511627776.0},
    {"Pi", 1125899906842624.0},
    {"Ei", 1152921504606846976.0},
    {"k", 1e3},
    {"K", 1e3},
    {"M", 1e6},
    {"G", 1e9},
    {"T", 1e12},
    {"P", 1e15},
    {"E", 1e18},
    {"m", 1e-3},
    {"u", 1e-6},
    {"n", 1e-9},
    {"", 1.0},
}};

bool is_binary(const Prefix& p) { return p.text.size() == 2; }

// Splits `unit` into a known prefix and the remaining base; tries each prefix in order.
// Returns the factor when `accept(base)` returns a multiplier for the base.
template <class Accept>
std::optional<double> match(std::string_view unit, bool allow_small, bool allow_binary, Accept accept) {
  for (const Prefix& p : kPrefixes) {
    if (!unit.starts_with(p.text)) continue;
    const bool small = p.factor < 1.0;
    if (small && !allow_small) continue;
    if (is_binary(p) && !allow_binary) continue;
    if (std::optional<double> base = accept(unit.substr(p.text.size()))) return p.factor * *base;
  }
  return std::nullopt;
}

std::optional<double> data_base(std::string_view base) {
  if (base == "B") return 1.0;
  if (base == "b") return 0.125;
  return std::nullopt;
}

std::optional<double> rate_base(std::string_view base) {
  for (std::string_view suffix : {"ps", "/s"}) {
    if (base.size() > suffix.size() && base.ends_with(suffix)) {
      return data_base(base.substr(0, base.size() - suffix.size()));
    }
  }
  return std::nullopt;
}

std::optional<double> flop_base(std::string_view base) {
  if (base == "Flop" || base == "FLOP" || base == "flop") return 1.0;
  return std::nullopt;
}

std::optional<double> flop_rate_base(std::string_view base) {
  for (std::string_view s : {"Flops", "FLOPS", "FLOPs", "flops", "Flop/s", "FLOP/s", "flop/s"}) {
    if (base == s) return 1.0;
  }
  return std::nullopt;
}

std::optional<double> time_factor(std::string_view unit) {
  if (unit == "s") return 1.0;
  if (unit == "ms") return 1e-3;
  if (unit == "us" || unit == "\xC2\xB5s" || unit == "\xCE\xBCs") return 1e-6;  // us, micro sign, mu
  if (unit == "ns") return 1e-9;
  if (unit == "ps") return 1e-12;
  if (unit == "min") return 60.0;
  if (unit == "h") return 3600.0;
  if (unit == "d") return 86400.0;
  if (unit == "y") return kSecondsPerYear;
  return std::nullopt;
}

std::optional<double> money_base(std::string_view base) {
  if (base == "USD") return 1.0;
  return std::nullopt;
}

// "USD/h": dollars per time unit, as dollars per second.
std::optional<double> money_rate_base(std::string_view base) {
  if (!base.starts_with("USD/")) return std::nullopt;
  const std::optional<double> per = time_factor(base.substr(4));
  if (!per) return std::nullopt;
  return 1.0 / *per;
}

std::optional<double> power_base(std::string_view base) {
  if (base == "W") return 1.0;
  return std::nullopt;
}

std::optional<double> energy_base(std::string_view base) {
  if (base == "J") return 1.0;
  if (base == "Wh") return 3600.0;
  return std::nullopt;
}

// "USD/kWh": dollars per energy unit (a prefixed Wh or J), as dollars per joule.
std::optional<double> energy_price(std::string_view unit) {
  const size_t slash = unit.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  const std::optional<double> money = match(unit.substr(0, slash), false, false, money_base);
  const std::optional<double> energy = match(unit.substr(slash + 1), false, false, energy_base);
  if (!money || !energy) return std::nullopt;
  return *money / *energy;
}

std::optional<double> count_base(std::string_view base) {
  if (base.empty()) return 1.0;
  return std::nullopt;
}

std::optional<double> unit_factor(std::string_view unit, Unit kind) {
  switch (kind) {
    case Unit::kBytes: return match(unit, false, true, data_base);
    case Unit::kRate: return match(unit, false, true, rate_base);
    case Unit::kTime: return time_factor(unit);
    case Unit::kFlops: return match(unit, false, false, flop_base);
    case Unit::kFlopRate: return match(unit, false, false, flop_rate_base);
    case Unit::kMoney: return match(unit, false, false, money_base);
    case Unit::kMoneyRate: return match(unit, false, false, money_rate_base);
    case Unit::kPower: return match(unit, false, false, power_base);
    case Unit::kEnergy: return match(unit, false, false, energy_base);
    case Unit::kEnergyPrice: return energy_price(unit);
    case Unit::kCount:  // "300B" tokens: B is billion (the usage of model cards), never bytes here
      return unit == "B" ? std::optional<double>(1e9) : match(unit, false, false, count_base);
  }
  return std::nullopt;
}


// Three significant digits without an exponent ("999", "1000", "1.23e+03" never).
std::string sig3(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, std::fabs(v) >= 999.5 ? "%.0f" : "%.3g", v);
  return buf;
}

std::string format_scaled(double v, std::string_view unit, bool binary) {
  const double step = binary ? 1024.0 : 1000.0;
  static constexpr std::array<std::string_view, 7> kDec{"", "k", "M", "G", "T", "P", "E"};
  static constexpr std::array<std::string_view, 7> kBin{"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  size_t i = 0;
  while (std::fabs(v) >= step && i + 1 < kDec.size()) {
    v /= step;
    ++i;
  }
  // 1000-1023 GiB print whole ("1010 GiB").
  return sig3(v) + " " + std::string(binary ? kBin[i] : kDec[i]) + std::string(unit);
}

}  // namespace

std::string_view unit_example(Unit unit) {
  switch (unit) {
    case Unit::kBytes: return "80GiB";
    case Unit::kRate: return "25GBps";
    case Unit::kTime: return "1.5us";
    case Unit::kFlops: return "1.2PFlop";
    case Unit::kFlopRate: return "312TFlops";
    case Unit::kMoney: return "300000USD";
    case Unit::kMoneyRate: return "31.5USD/h";
    case Unit::kPower: return "10.2kW";
    case Unit::kEnergy: return "12kWh";
    case Unit::kEnergyPrice: return "0.12USD/kWh";
    case Unit::kCount: return "1T";
  }
  return "";
}

std::string_view unit_name(Unit unit) {
  switch (unit) {
    case Unit::kBytes: return "size";
    case Unit::kRate: return "rate";
    case Unit::kTime: return "time";
    case Unit::kFlops: return "FLOP amount";
    case Unit::kFlopRate: return "FLOP rate";
    case Unit::kMoney: return "price";
    case Unit::kMoneyRate: return "price per time";
    case Unit::kPower: return "power";
    case Unit::kEnergy: return "energy";
    case Unit::kEnergyPrice: return "energy price";
    case Unit::kCount: return "count";
  }
  return "";
}

PhysicalRange physical_range(Unit unit) {
  switch (unit) {
    case Unit::kBytes: return {0.125, 1e21};
    case Unit::kRate: return {1.0, 1e15};
    case Unit::kTime: return {1e-12, 1000 * kSecondsPerYear};
    case Unit::kFlops: return {1.0, 1e30};
    case Unit::kFlopRate: return {1e3, 1e18};
    case Unit::kMoney: return {1e-6, 1e13};
    case Unit::kMoneyRate: return {1e-9, 1e9};
    case Unit::kPower: return {1e-3, 1e10};
    case Unit::kEnergy: return {1.0, 1e20};
    case Unit::kEnergyPrice: return {1e-12, 1e-3};
    case Unit::kCount: return {1.0, 1e18};
  }
  return {};
}

namespace {

// "1 PB/s" for messages: the bound in the unit of the example.
std::string bound_text(double v, Unit unit) {
  switch (unit) {
    case Unit::kBytes: return format_scaled(v, "B", false);
    case Unit::kRate: return format_scaled(v, "B/s", false);
    case Unit::kTime: return v >= 86400 ? format_double("%g y", v / kSecondsPerYear) : format_time(v);
    case Unit::kFlops: return format_double("%g FLOP", v);
    case Unit::kFlopRate: return format_scaled(v, "FLOP/s", false);
    case Unit::kMoney: return format_double("%g USD", v);
    case Unit::kMoneyRate: return format_double("%g USD/s", v);
    case Unit::kPower: return format_double("%g W", v);
    case Unit::kEnergy: return format_double("%g J", v);
    case Unit::kEnergyPrice: return format_double("%g USD/kWh", v * 3.6e6);
    case Unit::kCount: return format_double("%g", v);
  }
  return "";
}

}  // namespace

ParsedQuantity parse_quantity(std::string_view text, Unit unit) {
  std::string_view s = text;
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  double number = 0;
  const char* begin = s.data();
  const char* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(begin, end, number, std::chars_format::general);
  if (ec != std::errc() || s.empty()) {
    return {0, in_quotes(text) + " is not a " + std::string(unit_name(unit)) + "; write e.g. " +
                   in_quotes(unit_example(unit))};
  }
  std::string_view suffix(ptr, static_cast<size_t>(end - ptr));
  while (!suffix.empty() && suffix.front() == ' ') suffix.remove_prefix(1);
  if (!std::isfinite(number)) return {0, in_quotes(text) + " is not a finite number"};
  if (number < 0) return {0, in_quotes(text) + " must not be negative"};
  // A bare prefix ("100G") is as unit-less as a bare number.
  // Zero needs no unit ("0" is 0 of anything); whether a field may be zero is its own rule.
  std::optional<double> factor = suffix.empty() ? (unit == Unit::kCount || number == 0 ? std::optional<double>(1.0) : std::nullopt)
                                                 : unit_factor(suffix, unit);
  if (!factor) {
    const std::string digits(s.substr(0, static_cast<size_t>(ptr - begin)));
    // A rate without a unit is most often a NIC's, which is rated in bits a second: both are offered.
    const std::string hint =
        unit == Unit::kRate
            ? "; write e.g. " + in_quotes(digits + "Gbps") + " (gigabits a second, as NICs are rated) or " + in_quotes(digits + "GBps") +
                  " (gigabytes a second)"
            : "; write e.g. " + in_quotes(digits + std::string(unit_example(unit)).substr(unit_example(unit).find_first_not_of("0123456789.")));
    bool only_prefix = suffix.empty();
    for (const Prefix& p : kPrefixes) only_prefix = only_prefix || (!p.text.empty() && suffix == p.text);
    if (only_prefix) return {0, in_quotes(text) + " has no unit" + hint};
    return {0, in_quotes(text) + ": unknown " + std::string(unit_name(unit)) + " unit " + in_quotes(suffix) + hint};
  }
  const double value = number * *factor;
  const PhysicalRange range = physical_range(unit);
  if (!std::isfinite(value) || (value != 0 && (value < range.min || value > range.max))) {
    return {0, in_quotes(text) + " is outside the physical range of a " + std::string(unit_name(unit)) + " (" +
                   bound_text(range.min, unit) + " to " + bound_text(range.max, unit) + ")"};
  }
  return {value, {}};
}

std::string format_bytes(double bytes) { return format_scaled(bytes, "B", true); }
std::string format_rate(double bytes_per_s) { return format_scaled(bytes_per_s, "B/s", false); }
std::string format_flop_rate(double flops_per_s) { return format_scaled(flops_per_s, "FLOP/s", false); }

std::string format_money(double usd) {
  const double a = std::fabs(usd);
  if (a >= 999.5e6) return sig3(usd / 1e9) + "G USD";
  if (a >= 999.5e3) return sig3(usd / 1e6) + "M USD";
  if (a >= 999.5) return sig3(usd / 1e3) + "k USD";
  return sig3(usd) + " USD";
}

std::string format_duration(double seconds) {
  const double a = std::fabs(seconds);
  if (a >= 2 * 86400.0) return sig3(seconds / 86400.0) + " d";
  if (a >= 3600.0) return sig3(seconds / 3600.0) + " h";
  return format_time(seconds);
}

std::string format_time(double seconds) {
  char buf[64];
  const double a = std::fabs(seconds);
  if (a >= 1e4) std::snprintf(buf, sizeof buf, "%.0f s", seconds);  // %g would switch to 8.789e+04
  else if (a >= 1.0 || a == 0.0) std::snprintf(buf, sizeof buf, "%.4g s", seconds);
  else if (a >= 1e-3) std::snprintf(buf, sizeof buf, "%.4g ms", seconds * 1e3);
  else if (a >= 1e-6) std::snprintf(buf, sizeof buf, "%.4g us", seconds * 1e6);
  else if (a >= 1e-9) std::snprintf(buf, sizeof buf, "%.4g ns", seconds * 1e9);
  else std::snprintf(buf, sizeof buf, "%.6f ns", seconds * 1e9);
  return buf;
}

}  // namespace hetsim
