// File: cli/main.cpp
// The hetsim executable: thin subcommands over the library. Exit codes: 0 success, 2 bad input
// (messages like compiler errors on stderr) or a resource limit (memory, ulimit -v), 1 internal error, 128 + N when signal N (SIGINT,
// SIGTERM) stopped a sweep or sizing cleanly (its finished rows kept). Standard output is flushed and
// closed here and checked: a summary, table or CSV that did not reach it (a full disk,
// /dev/full) is an error naming it, never a success.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "base/input_error.hpp"
#include "cli/app.hpp"
#include "studies/sweep/worker_pool.hpp"

namespace {

// Flushes and closes stdout (C++ and C streams alike); the reason when something was lost.
std::string close_stdout() {
  errno = 0;
  std::cout.flush();
  const bool cpp_ok = static_cast<bool>(std::cout);
  const bool flushed = std::fflush(stdout) == 0 && !std::ferror(stdout);
  const int err = errno;
  const bool closed = std::fclose(stdout) == 0;
  if (cpp_ok && flushed && closed) return {};
  const int why = err != 0 ? err : errno;
  return why != 0 ? std::strerror(why) : "write failed";
}

}  // namespace

int main(int argc, char** argv) {
  int rc = 0;
  try {
    rc = hetsim::cli::run_cli(argc, argv);
  } catch (const hetsim::Interrupted& e) {
    std::cout.flush();
    std::cerr << "\nhetsim: stopped by signal " << e.signal() << " (" << strsignal(e.signal())
              << "); every scenario that finished is kept: run the same command again to go on\n";
    rc = 128 + e.signal();
  } catch (const hetsim::InputError& e) {
    std::cout.flush();
    std::cerr << e.what() << "\n";
    rc = 2;
  } catch (const std::bad_alloc&) {  // a resource limit, not a bug: said as one
    std::cout.flush();
    std::cerr << hetsim::out_of_memory("hetsim").what() << "\n";
    rc = 2;
  } catch (const std::exception& e) {
    std::cout.flush();
    std::cerr << "hetsim: internal error: " << e.what() << "\n";
    rc = 1;
  }
  if (const std::string lost = close_stdout(); !lost.empty()) {
    std::cerr << "<stdout>: error: cannot write the standard output: " << lost << "\n";
    return rc == 0 ? 2 : rc;
  }
  return rc;
}
