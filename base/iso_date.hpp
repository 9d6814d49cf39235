// File: base/iso_date.hpp
// When a measurement was taken or a price quoted: an ISO 8601 calendar date, to the month or the
// day, the day optionally with a time ("2026-05", "2026-11-23", "2026-11-23T01:00:08Z",
// "2026-11-23T01:00+01:00"), between 2000 and 2100.
#pragma once

#include <string>
#include <string_view>

namespace hetsim {

// Empty when `text` is such a date, else why not (for a message after the quoted text).
[[nodiscard]] std::string iso_date_problem(std::string_view text);

// Today's date in UTC, YYYY-MM-DD (the clock's: for defaults and for refusing dates still to come).
[[nodiscard]] std::string utc_today();

}  // namespace hetsim
