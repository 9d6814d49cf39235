// File: base/parallel_for.cpp
#include "base/parallel_for.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace hetsim {

int parallel_workers() { return static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1U, 16U)); }

void parallel_for(long count, const std::function<void(long item, int worker)>& work) {
  std::atomic<long> next{0};
  std::atomic<bool> stop{false};
  std::exception_ptr failed;
  std::mutex failing;
  auto run = [&](int worker) {
    try {
      for (long i = next++; i < count && !stop; i = next++) work(i, worker);
    } catch (...) {
      const std::lock_guard<std::mutex> lock(failing);
      if (!failed) failed = std::current_exception();
      stop = true;
    }
  };
  const int workers = static_cast<int>(std::min<long>(parallel_workers(), std::max(1L, count)));
  std::vector<std::thread> helpers;
  for (int k = 1; k < workers; ++k) helpers.emplace_back(run, k);
  run(0);
  for (std::thread& h : helpers) h.join();
  if (failed) std::rethrow_exception(failed);
}

}  // namespace hetsim
