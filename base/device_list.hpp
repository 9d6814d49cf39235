// File: base/device_list.hpp
// GPU lists on the command line ("0-7,16": indices and inclusive ranges), as --group and
// --src/--dst take them.
#pragma once

#include <string>
#include <vector>

namespace hetsim {

// The GPUs `spec` names, in the order written; "all" is every GPU. Throws InputError naming
// `option` for an index out of range, a malformed item or a GPU listed twice.
[[nodiscard]] std::vector<int> parse_device_list(const std::string& spec, int gpus, const std::string& option);

}  // namespace hetsim
