// File: sim/isolated_run.hpp
// Runs a function in a forked child process and returns the bytes it produced. SimGrid allows one
// engine per process and seals its platform at the first run, so every simulation gets a fresh
// process: a clean clock, a clean platform, and results that are identical bit for bit.
#pragma once

#include <functional>
#include <string>

namespace hetsim {

// Calls `work` in a child process; its return value comes back as the result. An exception in the
// child is rethrown in the parent as std::runtime_error carrying the child's message.
[[nodiscard]] std::string run_isolated(const std::function<std::string()>& work);

}  // namespace hetsim
