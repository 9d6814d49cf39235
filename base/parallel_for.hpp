// File: base/parallel_for.hpp
// hetsim's one way to spread independent items over the machine's cores: work(item, worker) for
// every item in [0, count), handed out in order to up to parallel_workers() threads (the calling
// thread is one of them). Each worker has its own index in [0, parallel_workers()), so callers
// keep per-worker scratch and combine it afterwards in an order that does not depend on timing
// (sums of integers, maxima, results stored per item): the results are the same bit for bit on
// any number of cores. The first exception a worker throws is rethrown once all have stopped.
#pragma once

#include <functional>

namespace hetsim {

// The machine's cores, at least 1 and at most 16.
[[nodiscard]] int parallel_workers();

void parallel_for(long count, const std::function<void(long item, int worker)>& work);

}  // namespace hetsim
