// File: base/process_tie.hpp
// Child processes that die with their parent: simulation forks, platform servers and sweep
// workers must never run on under PID 1 when hetsim is killed, however it ends (SIGKILL too).
#pragma once

#include <sys/types.h>

namespace hetsim {

// Call in a child right after fork(), with the pid of the process that forked it (read before
// the fork): the kernel sends this child SIGKILL when the forking thread ends (hetsim forks from
// its main thread); if the parent is already gone, the child exits at once.
void die_with_parent(pid_t parent);

}  // namespace hetsim
