// File: tests/base/units_test.cpp
#include "base/units.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace hetsim {
namespace {

double ok(std::string_view s, Unit u) {
  ParsedQuantity q = parse_quantity(s, u);
  EXPECT_TRUE(q.ok()) << s << ": " << q.error;
  return q.value;
}

std::string err(std::string_view s, Unit u) {
  ParsedQuantity q = parse_quantity(s, u);
  EXPECT_FALSE(q.ok()) << s << " parsed as " << q.value;
  return q.error;
}

TEST(Units, DecimalAndBinaryBytes) {
  EXPECT_DOUBLE_EQ(ok("80GiB", Unit::kBytes), 80.0 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(ok("1.5GB", Unit::kBytes), 1.5e9);
  EXPECT_DOUBLE_EQ(ok("4KiB", Unit::kBytes), 4096);
  EXPECT_DOUBLE_EQ(ok("512B", Unit::kBytes), 512);
  EXPECT_DOUBLE_EQ(ok("200Gb", Unit::kBytes), 25e9);  // bits
  EXPECT_DOUBLE_EQ(ok("2 TB", Unit::kBytes), 2e12);
}

TEST(Units, RatesInBytesAndBits) {
  EXPECT_DOUBLE_EQ(ok("25GBps", Unit::kRate), 25e9);
  EXPECT_DOUBLE_EQ(ok("25GB/s", Unit::kRate), 25e9);
  EXPECT_DOUBLE_EQ(ok("200Gbps", Unit::kRate), 25e9);
  EXPECT_DOUBLE_EQ(ok("10.4Gbps", Unit::kRate), 1.3e9);
  EXPECT_DOUBLE_EQ(ok("1GiBps", Unit::kRate), 1073741824.0);
  EXPECT_DOUBLE_EQ(ok("3.35TBps", Unit::kRate), 3.35e12);
}

TEST(Units, Times) {
  EXPECT_DOUBLE_EQ(ok("1.5us", Unit::kTime), 1.5e-6);
  EXPECT_DOUBLE_EQ(ok("2ms", Unit::kTime), 2e-3);
  EXPECT_DOUBLE_EQ(ok("10ns", Unit::kTime), 1e-8);
  EXPECT_DOUBLE_EQ(ok("3s", Unit::kTime), 3);
  EXPECT_DOUBLE_EQ(ok("2min", Unit::kTime), 120);
  EXPECT_DOUBLE_EQ(ok("0us", Unit::kTime), 0);
}

TEST(Units, FlopsAndFlopRates) {
  EXPECT_DOUBLE_EQ(ok("312TFlops", Unit::kFlopRate), 312e12);
  EXPECT_DOUBLE_EQ(ok("19.5TFLOPS", Unit::kFlopRate), 19.5e12);
  EXPECT_DOUBLE_EQ(ok("1PFlop/s", Unit::kFlopRate), 1e15);
  EXPECT_DOUBLE_EQ(ok("1.2PFlop", Unit::kFlops), 1.2e15);
  EXPECT_DOUBLE_EQ(ok("3e12Flop", Unit::kFlops), 3e12);
}

TEST(Units, MoneyPowerEnergyAndCountsForSizing) {
  EXPECT_DOUBLE_EQ(ok("300000USD", Unit::kMoney), 3e5);
  EXPECT_DOUBLE_EQ(ok("4MUSD", Unit::kMoney), 4e6);
  EXPECT_DOUBLE_EQ(ok("36USD/h", Unit::kMoneyRate), 0.01);  // per second
  EXPECT_DOUBLE_EQ(ok("1kUSD/d", Unit::kMoneyRate), 1e3 / 86400);
  EXPECT_DOUBLE_EQ(ok("10.2kW", Unit::kPower), 10200);
  EXPECT_DOUBLE_EQ(ok("700W", Unit::kPower), 700);
  EXPECT_DOUBLE_EQ(ok("2kWh", Unit::kEnergy), 7.2e6);
  EXPECT_DOUBLE_EQ(ok("3.6MJ", Unit::kEnergy), 3.6e6);
  EXPECT_DOUBLE_EQ(ok("0.36USD/kWh", Unit::kEnergyPrice), 1e-7);
  EXPECT_DOUBLE_EQ(ok("1T", Unit::kCount), 1e12);
  EXPECT_DOUBLE_EQ(ok("2e9", Unit::kCount), 2e9);
  // Issue 35: counts as people write them; B is billion in a count, a byte only in a size.
  EXPECT_DOUBLE_EQ(ok("300B", Unit::kCount), 300e9);
  EXPECT_DOUBLE_EQ(ok("10k", Unit::kCount), 1e4);
  EXPECT_DOUBLE_EQ(ok("1.5M", Unit::kCount), 1.5e6);
  EXPECT_DOUBLE_EQ(ok("300B", Unit::kBytes), 300);
  EXPECT_FALSE(parse_quantity("3kB", Unit::kCount).ok());
  EXPECT_DOUBLE_EQ(ok("4y", Unit::kTime), 4 * 365.25 * 86400);
  EXPECT_DOUBLE_EQ(ok("2d", Unit::kTime), 172800);
  EXPECT_EQ(err("300000", Unit::kMoney), "\"300000\" has no unit; write e.g. \"300000USD\"");
  EXPECT_EQ(err("10kWh", Unit::kPower), "\"10kWh\": unknown power unit \"kWh\"; write e.g. \"10kW\"");
  EXPECT_FALSE(parse_quantity("31.5USD", Unit::kMoneyRate).ok());  // a price is not a rent
  EXPECT_FALSE(parse_quantity("0.12USD/kW", Unit::kEnergyPrice).ok());
  EXPECT_FALSE(parse_quantity("1Tokens", Unit::kCount).ok());
  EXPECT_EQ(format_money(4.2e6), "4.2M USD");
  EXPECT_EQ(format_money(850e3), "850k USD");
  EXPECT_EQ(format_duration(3 * 86400), "3 d");
  EXPECT_EQ(format_duration(7200), "2 h");
  EXPECT_EQ(format_money(999999), "1M USD");
  EXPECT_EQ(format_duration(1234 * 86400.0), "1234 d");
}

TEST(Units, MalformedStringsSayWhatIsWrong) {
  EXPECT_EQ(err("100", Unit::kRate), "\"100\" has no unit; write e.g. \"100Gbps\" (gigabits a second, as NICs are rated) or \"100GBps\" (gigabytes a second)");
  EXPECT_EQ(err("100G", Unit::kRate), "\"100G\" has no unit; write e.g. \"100Gbps\" (gigabits a second, as NICs are rated) or \"100GBps\" (gigabytes a second)");
  EXPECT_EQ(err("fast", Unit::kTime), "\"fast\" is not a time; write e.g. \"1.5us\"");
  EXPECT_EQ(err("", Unit::kBytes), "\"\" is not a size; write e.g. \"80GiB\"");
  EXPECT_EQ(err("-5GBps", Unit::kRate), "\"-5GBps\" must not be negative");
  EXPECT_EQ(err("5parsec", Unit::kTime), "\"5parsec\": unknown time unit \"parsec\"; write e.g. \"5us\"");
  EXPECT_EQ(err("1555GB", Unit::kRate), "\"1555GB\": unknown rate unit \"GB\"; write e.g. \"1555Gbps\" (gigabits a second, as NICs are rated) or \"1555GBps\" (gigabytes a second)");
  EXPECT_EQ(err("1e999GB", Unit::kBytes), "\"1e999GB\" is not a size; write e.g. \"80GiB\"");
  EXPECT_FALSE(parse_quantity("312TFlop", Unit::kFlopRate).ok());  // an amount is not a rate
  EXPECT_FALSE(parse_quantity("5mB", Unit::kBytes).ok());          // milli-bytes make no sense
  EXPECT_FALSE(parse_quantity("1.5.3us", Unit::kTime).ok());
  // Finite but not physical: outside the kind's range (zero is the field's own rule).
  EXPECT_EQ(err("1e308EBps", Unit::kRate), "\"1e308EBps\" is outside the physical range of a rate (1 B/s to 1 PB/s)");
  EXPECT_EQ(err("1e-300Gbps", Unit::kRate), "\"1e-300Gbps\" is outside the physical range of a rate (1 B/s to 1 PB/s)");
  EXPECT_FALSE(parse_quantity("1e300EiB", Unit::kBytes).ok());
  EXPECT_FALSE(parse_quantity("1e-20s", Unit::kTime).ok());
  EXPECT_FALSE(parse_quantity("2000y", Unit::kTime).ok());
  EXPECT_FALSE(parse_quantity("1e300TFlops", Unit::kFlopRate).ok());
  EXPECT_DOUBLE_EQ(ok("0Gbps", Unit::kRate), 0);
  EXPECT_DOUBLE_EQ(ok("0", Unit::kBytes), 0);  // zero needs no unit; the field says whether it may be zero
  EXPECT_DOUBLE_EQ(ok("900GBps", Unit::kRate), 900e9);
}

TEST(Units, FormatsForHumans) {
  EXPECT_EQ(format_bytes(40.0 * 1024 * 1024 * 1024), "40 GiB");
  EXPECT_EQ(format_time(0.0123), "12.3 ms");
  EXPECT_EQ(format_time(87890.4), "87890 s");  // not "8.789e+04 s"
  EXPECT_EQ(format_time(2.5e-14), "0.000025 ns");
  EXPECT_EQ(format_rate(25e9), "25 GB/s");
  EXPECT_EQ(format_bytes(1000.0 * 1024 * 1024 * 1024), "1000 GiB");  // not "1e+03 GiB"
  EXPECT_EQ(format_bytes(999.7 * 1024 * 1024), "1000 MiB");
}

}  // namespace
}  // namespace hetsim
