// File: studies/sweep/mpi_relay.cpp
// hetsim-mpi-relay: the MPI side of a sweep over ranks. Each rank's hetsim starts one as a child
// (mpi_pool.cpp) and talks to it over two pipes; the relay, not hetsim, is the MPI process,
// because SimGrid, which hetsim links, exports an MPI of its own (SMPI) under the same symbols
// (and hetsim's tcmalloc must not meet the MPI library's allocations). It links MPI alone.
//
// Frames on the pipes: little-endian u64 words, then bytes.
//   rank 0:  hetsim -> relay: count, then `count` job ids.
//            relay -> hetsim: for each result as it arrives: index (into the ids), length, bytes;
//            finally kEnd.
//   others:  relay -> hetsim: a job id to run, or kEnd; hetsim -> relay: length, bytes.
// Rank 0 hands out ids one at a time as ranks report back (dynamic load balancing).
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <thread>
#include <vector>

#include "base/fd_io.hpp"

using hetsim::read_all;
using hetsim::write_all;

namespace {

constexpr int kJobTag = 1, kStopTag = 2, kResultTag = 3;
constexpr uint64_t kEnd = ~uint64_t{0};

// Waits for a message from `source` with `tag` without spinning. MPI_Probe and MPI_Recv poll a
// core while they wait (OpenMPI's progress loop), and rank 0's relay waits for the whole sweep:
// it kept half a core busy, taken from the workers where ranks are as many as cores (a 12-scenario
// sweep on 3 ranks and 2 cores spent 2.0 s of system time, 0.9 s with this). Polling with a sleep
// that grows to 2 ms costs a result at most 2 ms, against scenarios of a tenth of a second and more.
MPI_Status wait_for(int source, int tag) {
  auto pause = std::chrono::microseconds(20);
  for (;;) {
    int arrived = 0;
    MPI_Status st;
    MPI_Iprobe(source, tag, MPI_COMM_WORLD, &arrived, &st);
    if (arrived) return st;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(2000));
  }
}

int coordinate(int size) {
  uint64_t count = 0;
  if (!read_all(STDIN_FILENO, &count, 8)) return 1;
  std::vector<uint64_t> ids(count);
  if (count > 0 && !read_all(STDIN_FILENO, ids.data(), 8 * count)) return 1;
  size_t next = 0, outstanding = 0;
  std::vector<uint64_t> running(static_cast<size_t>(size), 0);
  auto hand_out = [&](int to) {
    unsigned long long id = 0;
    if (next < count) {
      id = ids[next];
      running[static_cast<size_t>(to)] = next++;
      ++outstanding;
      MPI_Send(&id, 1, MPI_UNSIGNED_LONG_LONG, to, kJobTag, MPI_COMM_WORLD);
    } else {
      MPI_Send(&id, 1, MPI_UNSIGNED_LONG_LONG, to, kStopTag, MPI_COMM_WORLD);
    }
  };
  for (int r = 1; r < size; ++r) hand_out(r);
  std::vector<char> buffer;
  while (outstanding > 0) {
    const MPI_Status st = wait_for(MPI_ANY_SOURCE, kResultTag);
    int n = 0;
    MPI_Get_count(&st, MPI_CHAR, &n);
    buffer.resize(static_cast<size_t>(n));
    MPI_Recv(buffer.data(), n, MPI_CHAR, st.MPI_SOURCE, kResultTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    --outstanding;
    const uint64_t head[2] = {running[static_cast<size_t>(st.MPI_SOURCE)], static_cast<uint64_t>(n)};
    if (!write_all(STDOUT_FILENO, head, sizeof head) || !write_all(STDOUT_FILENO, buffer.data(), buffer.size())) return 1;
    hand_out(st.MPI_SOURCE);
  }
  return write_all(STDOUT_FILENO, &kEnd, 8) ? 0 : 1;
}

int serve() {
  std::vector<char> buffer;
  for (;;) {
    unsigned long long id = 0;
    MPI_Status st = wait_for(0, MPI_ANY_TAG);
    MPI_Recv(&id, 1, MPI_UNSIGNED_LONG_LONG, 0, st.MPI_TAG, MPI_COMM_WORLD, &st);
    const uint64_t word = st.MPI_TAG == kStopTag ? kEnd : static_cast<uint64_t>(id);
    if (!write_all(STDOUT_FILENO, &word, 8)) return 1;
    if (word == kEnd) return 0;
    uint64_t n = 0;
    if (!read_all(STDIN_FILENO, &n, 8)) return 1;
    buffer.resize(n);
    if (n > 0 && !read_all(STDIN_FILENO, buffer.data(), n)) return 1;
    MPI_Send(buffer.data(), static_cast<int>(n), MPI_CHAR, 0, kResultTag, MPI_COMM_WORLD);
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  // First, the rank and world size MPI gave this process: hetsim checks them against the launcher's
  // variables it read (stray ones, without mpirun, give a world of one).
  const uint64_t world[2] = {static_cast<uint64_t>(rank), static_cast<uint64_t>(size)};
  const int rc = !write_all(STDOUT_FILENO, world, sizeof world) ? 1 : rank == 0 ? coordinate(size) : serve();
  if (rc != 0) {
    std::fprintf(stderr, "hetsim-mpi-relay (rank %d): the pipe to hetsim broke\n", rank);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return 0;
}
