// File: base/fd_io.hpp
// Whole reads and writes on a file descriptor (pipes between hetsim's processes): loop over
// short transfers, retry on EINTR, report end of file or an error as false.
#pragma once

#include <cstddef>

namespace hetsim {

// Writes all `n` bytes; false when the other end is gone or the write fails.
[[nodiscard]] bool write_all(int fd, const void* data, size_t n);
// write_all on a socket: a peer that is gone fails the send instead of raising SIGPIPE.
[[nodiscard]] bool send_all(int socket, const void* data, size_t n);
// Reads exactly `n` bytes; false on end of file before them or an error.
[[nodiscard]] bool read_all(int fd, void* data, size_t n);

}  // namespace hetsim
