// File: tests/fuzz/fuzz_units.cpp
// Fuzz target: base/units.hpp parse_quantity for every Unit. The first byte picks the unit, the
// rest is the text. It must never throw, and a value it accepts is finite and not negative.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "base/units.hpp"
#include "tests/fuzz/fuzz_input.hpp"

namespace {

// Unit::kCount is the last enumerator (base/units.hpp); a unit added after it needs this updated.
constexpr int kUnits = static_cast<int>(hetsim::Unit::kCount) + 1;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const auto unit = static_cast<hetsim::Unit>(data[0] % kUnits);
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  hetsim::ParsedQuantity q;
  try {
    q = hetsim::parse_quantity(text, unit);
  } catch (...) {
    hetsim::fuzz::unexpected_exception("parse_quantity");
  }
  if (q.ok() && (!std::isfinite(q.value) || q.value < 0)) {
    std::fprintf(stderr, "fuzz: parse_quantity accepted a %s of %g\n", std::string(hetsim::unit_name(unit)).c_str(),
                 q.value);
    std::abort();
  }
  return 0;
}
