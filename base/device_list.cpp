// File: base/device_list.cpp
#include "base/device_list.hpp"

#include <algorithm>
#include <charconv>
#include <string_view>

#include "base/input_error.hpp"

namespace hetsim {

std::vector<int> parse_device_list(const std::string& spec, int gpus, const std::string& option) {
  return parse_index_list(spec, gpus, "GPU", option);
}

std::vector<int> parse_index_list(const std::string& spec, int count, const std::string& noun, const std::string& option) {
  std::vector<int> out;
  if (spec == "all") {
    for (int g = 0; g < count; ++g) out.push_back(g);
    return out;
  }
  // One side of `item` (an index, or a range's end); an empty side ("-1", "3-") is said as the item.
  auto number = [&](std::string_view s, std::string_view item) {
    int v = -1;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size() || v < 0 || v >= count) {
      const bool whole = s.empty();
      throw InputError(option, "", "\"" + std::string(whole ? item : s) + "\" is not a " + noun + " index" + (whole ? " or range" : "") +
                                       " of this cluster: it has " + std::to_string(count) + " " + noun + (count == 1 ? "" : "s") +
                                       " (0 to " + std::to_string(count - 1) + "); write e.g. \"0-7,16\"");
    }
    return v;
  };
  std::vector<char> listed(static_cast<size_t>(std::max(count, 0)), 0);  // a flag per index, not a search per index
  std::string_view rest = spec;
  if (rest.empty()) throw InputError(option, "", "no " + noun + "s given; write e.g. \"0-7,16\"");
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    if (item.empty() || (comma != std::string_view::npos && rest.empty())) {
      throw InputError(option, "", "\"" + spec + "\" has an empty entry (two commas in a row, or one at an end); write e.g. \"0-7,16\"");
    }
    const size_t dash = item.find('-');
    const int lo = number(item.substr(0, dash), item);
    const int hi = dash == std::string_view::npos ? lo : number(item.substr(dash + 1), item);
    if (hi < lo) throw InputError(option, "", "\"" + std::string(item) + "\": the range runs backwards");
    for (int g = lo; g <= hi; ++g) {
      if (listed[g] != 0) {
        throw InputError(option, "", noun + " " + std::to_string(g) + " is listed twice");
      }
      listed[g] = 1;
      out.push_back(g);
    }
  }
  return out;
}

std::string format_index_list(std::vector<int> indices) {
  std::sort(indices.begin(), indices.end());
  indices.erase(std::unique(indices.begin(), indices.end()), indices.end());
  std::string out;
  for (size_t i = 0; i < indices.size();) {
    size_t j = i;
    while (j + 1 < indices.size() && indices[j + 1] == indices[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(indices[i]);
    if (j > i) out += '-' + std::to_string(indices[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace hetsim
