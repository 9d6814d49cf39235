// File: base/device_list.cpp
#include "base/device_list.hpp"

#include <algorithm>
#include <charconv>
#include <string_view>

#include "base/input_error.hpp"

namespace hetsim {

std::vector<int> parse_device_list(const std::string& spec, int gpus, const std::string& option) {
  std::vector<int> out;
  if (spec == "all") {
    for (int g = 0; g < gpus; ++g) out.push_back(g);
    return out;
  }
  auto number = [&](std::string_view s) {
    int v = -1;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size() || v < 0 || v >= gpus) {
      throw InputError(option, "", "\"" + std::string(s) + "\" is not a GPU index of this cluster (0 to " +
                                       std::to_string(gpus - 1) + "); write e.g. \"0-7,16\"");
    }
    return v;
  };
  std::string_view rest = spec;
  if (rest.empty()) throw InputError(option, "", "no GPUs given; write e.g. \"0-7,16\"");
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    const size_t dash = item.find('-');
    const int lo = number(item.substr(0, dash));
    const int hi = dash == std::string_view::npos ? lo : number(item.substr(dash + 1));
    if (hi < lo) throw InputError(option, "", "\"" + std::string(item) + "\": the range runs backwards");
    for (int g = lo; g <= hi; ++g) {
      if (std::find(out.begin(), out.end(), g) != out.end()) {
        throw InputError(option, "", "GPU " + std::to_string(g) + " is listed twice");
      }
      out.push_back(g);
    }
  }
  return out;
}

}  // namespace hetsim
