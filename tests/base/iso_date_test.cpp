// File: tests/base/iso_date_test.cpp
#include "base/iso_date.hpp"

#include <gtest/gtest.h>

namespace hetsim {
namespace {

TEST(IsoDate, CalendarDatesWithOrWithoutATime) {
  for (const char* ok : {"2026-11-23", "2026-11-23T01:00:08Z", "2026-11-23T01:00", "2026-11-23T01:00:08.125+01:00",
                         "2024-02-29", "2000-01-01", "2026-11-23 01:00:08"}) {
    EXPECT_EQ(iso_date_problem(ok), "") << ok;
  }
  EXPECT_EQ(iso_date_problem("2026-02-29"), " has no day 29 in its month");
  EXPECT_EQ(iso_date_problem("2100-02-29"), " has no day 29 in its month");  // not a leap year
  EXPECT_EQ(iso_date_problem("2026-13-01"), " has no month 13");
  EXPECT_EQ(iso_date_problem("1970-01-01"), " is not a year of GPU measurements or prices (2000 to 2100)");
  for (const char* bad : {"", "yesterday", "2026-1-1", "2026/11/23", "2026-11-23T25:00", "2026-11-23T01:00Zulu",
                          "2026-11-23T01:00:08.", "2026-11-23T01:00+1", "20261123"}) {
    EXPECT_NE(iso_date_problem(bad), "") << bad;
  }
}

TEST(IsoDate, MonthPrecisionIsADate) {
  // Issue 35: the shipped sizing offers are dated "2024-12" and "2026-05" (ISO 8601 month precision).
  for (const char* ok : {"2024-12", "2026-05", "2000-01"}) EXPECT_EQ(iso_date_problem(ok), "") << ok;
  EXPECT_EQ(iso_date_problem("2026-13"), " has no month 13");
  EXPECT_EQ(iso_date_problem("2026-00"), " has no month 0");
  for (const char* bad : {"2026-5", "2026-05-", "2026-05T01:00", "2026-0512"}) EXPECT_NE(iso_date_problem(bad), "") << bad;
}

}  // namespace
}  // namespace hetsim
