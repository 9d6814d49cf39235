// File: base/process_tie.cpp
#include "base/process_tie.hpp"

#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>

namespace hetsim {

void die_with_parent(pid_t parent) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(0);  // it died between fork() and prctl()
}

}  // namespace hetsim
