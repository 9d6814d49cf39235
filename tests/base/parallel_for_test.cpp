// File: tests/base/parallel_for_test.cpp
// base/parallel_for: every item once, each on a worker of its own index, and a worker's exception
// rethrown after all have stopped.
#include "base/parallel_for.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

namespace hetsim {
namespace {

TEST(ParallelFor, EveryItemRunsOnceOnAWorkerOfItsOwnIndex) {
  const long n = 10000;
  std::vector<int> runs(n, 0);
  std::vector<long> per_worker(static_cast<size_t>(parallel_workers()), 0);
  parallel_for(n, [&](long item, int worker) {
    ASSERT_GE(worker, 0);
    ASSERT_LT(worker, parallel_workers());
    ++runs[static_cast<size_t>(item)];  // items are distinct: no two workers write one slot
    ++per_worker[static_cast<size_t>(worker)];
  });
  for (long i = 0; i < n; ++i) ASSERT_EQ(runs[static_cast<size_t>(i)], 1) << i;
  long total = 0;
  for (long c : per_worker) total += c;
  EXPECT_EQ(total, n);
  EXPECT_GE(parallel_workers(), 1);
  EXPECT_LE(parallel_workers(), 16);
}

TEST(ParallelFor, NoItemsRunNothingAndAThrowIsRethrownOnce) {
  parallel_for(0, [](long, int) { FAIL() << "no item to run"; });
  try {
    parallel_for(1000, [](long item, int) {
      if (item == 10) throw std::runtime_error("item 10");
    });
    ADD_FAILURE() << "nothing rethrown";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "item 10");
  }
}

}  // namespace
}  // namespace hetsim
