// File: base/units.hpp
// Parsing of quantities written with units ("1.5us", "25GBps", "200Gbps", "80GiB", "312TFlops",
// "300000USD", "31.5USD/h", "10.2kW", "0.12USD/kWh", "1T") into SI doubles: seconds, bytes,
// bytes per second, FLOP, FLOP per second, US dollars, dollars per second, watts, joules,
// dollars per joule and plain counts.
#pragma once

#include <string>
#include <string_view>

namespace hetsim {

// The kind of quantity a string must express. Decimal prefixes are powers of 10 (GB = 1e9 B),
// binary ones powers of 2 (GiB = 2^30 B); a lower-case "b" is bits (200Gbps = 25e9 B/s).
enum class Unit {
  kBytes,      // "80GiB", "1.5GB", "200Gb" (bits)     -> bytes
  kRate,       // "25GBps", "25GB/s", "200Gbps"        -> bytes per second
  kTime,       // "1.5us", "2ms", "1s", "3min"         -> seconds
  kFlops,      // "1.2PFlop", "3e12Flop"               -> FLOP (an amount of work)
  kFlopRate,   // "312TFlops", "312TFlop/s"            -> FLOP per second
  kMoney,      // "300000USD", "4MUSD"                 -> US dollars
  kMoneyRate,  // "31.5USD/h", "2000USD/h"             -> US dollars per second
  kPower,      // "700W", "10.2kW", "1.5MW"            -> watts
  kEnergy,     // "12kWh", "3.6MJ"                     -> joules
  kEnergyPrice,  // "0.12USD/kWh"                      -> US dollars per joule
  kCount,      // "1T", "300G", "300B", "2e12" (tokens, samples) -> a plain number (SI prefixes k M G T P E,
               // and B for billion as model cards write it; no unit)
};
// Times also take "d" (86 400 s) and "y": the Julian year of 365.25 days (31 557 600 s).

// A parse outcome: either a value in SI units or a message saying what is wrong.
struct ParsedQuantity {
  double value = 0;
  std::string error;  // empty on success
  [[nodiscard]] bool ok() const { return error.empty(); }
};

// Physical range of each kind, checked by parse_quantity (0 is always let through: whether a field
// may be zero is the field's own rule): sizes 1 bit .. 1 ZB; rates 1 B/s .. 1 PB/s; times 1 ps ..
// 1000 years; FLOP 1 .. 1e30; FLOP rates 1 kFLOP/s .. 1 EFLOP/s (one device); prices 1 uUSD ..
// 10 000 billion USD; rents 1 nUSD/s .. 1 GUSD/s; power 1 mW .. 10 GW; energy 1 J .. 1e20 J; energy
// prices 1e-12 .. 1e-3 USD/J (3600 USD/kWh); counts 1 .. 1e18.
struct PhysicalRange {
  double min = 0, max = 0;
};
[[nodiscard]] PhysicalRange physical_range(Unit unit);

// Parses `text` as a quantity of kind `unit`. Never throws; negative values and values outside the
// kind's physical range are rejected.
[[nodiscard]] ParsedQuantity parse_quantity(std::string_view text, Unit unit);

// A short example of the unit kind for messages, e.g. "25GBps".
[[nodiscard]] std::string_view unit_example(Unit unit);
// The name of the unit kind for messages, e.g. "rate".
[[nodiscard]] std::string_view unit_name(Unit unit);

// Human-readable formatting for terminal output (not for files): "1.25 GB", "3.1 ms", "312 TFLOP/s".
[[nodiscard]] std::string format_bytes(double bytes);
[[nodiscard]] std::string format_time(double seconds);
[[nodiscard]] std::string format_rate(double bytes_per_s);
[[nodiscard]] std::string format_flop_rate(double flops_per_s);
[[nodiscard]] std::string format_money(double usd);         // "4.2M USD", "850k USD", "12.3 USD"
[[nodiscard]] std::string format_duration(double seconds);  // format_time, or hours / days beyond an hour

}  // namespace hetsim
