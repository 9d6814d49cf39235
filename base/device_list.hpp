// File: base/device_list.hpp
// Index lists ("0-7,16": indices and inclusive ranges) of GPUs on the command line, as --group
// and --src/--dst take them, and of nodes in input files; and the same form written back.
#pragma once

#include <string>
#include <vector>

namespace hetsim {

// The GPUs `spec` names, in the order written; "all" is every GPU. Throws InputError naming
// `option` for an index out of range, a malformed item or a GPU listed twice.
[[nodiscard]] std::vector<int> parse_device_list(const std::string& spec, int gpus, const std::string& option);

// The same for any indices below `count`, each called a `noun` ("GPU", "node") in messages.
[[nodiscard]] std::vector<int> parse_index_list(const std::string& spec, int count, const std::string& noun,
                                                const std::string& option);

// Indices written as parse_index_list reads them, ascending with runs as ranges: {8, 0, 1, 2, 3}
// -> "0-3,8". Duplicates are written once.
[[nodiscard]] std::string format_index_list(std::vector<int> indices);

}  // namespace hetsim
