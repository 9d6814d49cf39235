// File: sim/isolated_run.cpp
#include "sim/isolated_run.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "base/fd_io.hpp"

namespace hetsim {

std::string run_isolated(const std::function<std::string()>& work) {
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error(std::string("pipe failed: ") + std::strerror(errno));
  std::fflush(stdout);  // the child must not flush the parent's buffered output a second time
  std::fflush(stderr);
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));
  if (pid == 0) {
    ::close(fds[0]);
    char status = 0;
    std::string out;
    try {
      out = work();
    } catch (const std::exception& e) {
      status = 1;
      out = e.what();
    } catch (...) {
      status = 1;
      out = "unknown exception in simulation";
    }
    const bool ok = write_all(fds[1], &status, 1) && write_all(fds[1], out.data(), out.size());
    std::fflush(stderr);
    ::_exit(ok ? 0 : 3);
  }
  ::close(fds[1]);
  std::string data;
  char buf[1 << 16];
  for (;;) {
    const ssize_t r = ::read(fds[0], buf, sizeof buf);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    data.append(buf, static_cast<size_t>(r));
  }
  ::close(fds[0]);
  int wstatus = 0;
  while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  if (data.empty() || !WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
    throw std::runtime_error("simulation process died (" +
                             (WIFSIGNALED(wstatus) ? "signal " + std::to_string(WTERMSIG(wstatus))
                                                   : "exit status " + std::to_string(WEXITSTATUS(wstatus))) +
                             ")");
  }
  if (data[0] != 0) throw std::runtime_error("simulation failed: " + data.substr(1));
  return data.substr(1);
}

}  // namespace hetsim
