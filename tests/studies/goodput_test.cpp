// File: tests/studies/goodput_test.cpp
// Goodput with failures (studies/sizing/goodput.hpp): Daly's expected wall time on a hand case,
// the optimum interval against Young's closed form where they agree, goodput falling as the
// cluster grows at a fixed failure rate, and the published defaults.
#include "studies/sizing/goodput.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace hetsim {
namespace {

TEST(Goodput, DalysExpectedTimeOnAHandCase) {
  // M = 1000 s, delta = 10 s, R = 0, tau = 100 s: T/W = 1000 (e^0.11 - 1) / 100 = 1.162781...
  EXPECT_NEAR(goodput_at(100, 10, 0, 1000), 1.0 / (10 * std::expm1(0.11)), 1e-12);
  // A restart of 50 s multiplies the time by e^(50/1000).
  EXPECT_NEAR(goodput_at(100, 10, 50, 1000), goodput_at(100, 10, 0, 1000) / std::exp(0.05), 1e-12);
  // Failures that never come: only the checkpoints cost, tau / (tau + delta).
  EXPECT_NEAR(goodput_at(100, 10, 0, 1e15), 100.0 / 110.0, 1e-9);
}

TEST(Goodput, TheOptimumIsYoungsWhereCheckpointsAreShortAgainstTheMtbf) {
  Reliability r;
  r.gpu_failures_per_year = 365.25 * 86400 / 1e6;  // one GPU: M = 1e6 s
  r.checkpoint_write_Bps = 1e9;
  r.restart_s = 0;
  const Goodput g = expected_goodput(r, 1, 1, 1e10);  // delta = 10 s
  EXPECT_NEAR(g.mtbf_s, 1e6, 1e-3);
  EXPECT_NEAR(g.checkpoint_s, 10, 1e-12);
  const double young = std::sqrt(2 * 10 * 1e6);  // 4472 s
  EXPECT_NEAR(g.interval_s / young, 1.0, 0.01);
  EXPECT_NEAR(g.goodput, 1 - std::sqrt(2 * 10 / 1e6), 2e-5);  // first order: 1 - sqrt(2 delta / M)
  // No interval does better (the model's own maximum).
  for (double f : {0.5, 0.9, 1.1, 2.0}) EXPECT_LE(goodput_at(g.interval_s * f, 10, 0, 1e6), g.goodput + 1e-12);
}

TEST(Goodput, FallsAsTheClusterGrowsAtAFixedFailureRate) {
  const Reliability r;  // Llama 3's rate; write rate per GPU, so the checkpoint time falls with GPUs
  const double ckpt = 70e9 * 14;  // a 70B model's weights and optimizer state
  double last = 1;
  for (long gpus : {512L, 2048L, 8192L, 32768L}) {
    const Goodput g = expected_goodput(r, gpus, gpus / 8, ckpt);
    EXPECT_LT(g.goodput, last) << gpus;
    EXPECT_GT(g.goodput, 0.5) << gpus;
    last = g.goodput;
  }
  Reliability none;
  none.gpu_failures_per_year = 0;
  EXPECT_EQ(expected_goodput(none, 16384, 2048, ckpt).goodput, 1.0);
}

TEST(Goodput, TheDefaultsAreLlama3s) {
  EXPECT_NEAR(Reliability::kLlama3GpuFailuresPerYear, 419.0 / (16384 * 54 / 365.25), 1e-12);
  EXPECT_NEAR(Reliability::kLlama3GpuFailuresPerYear, 0.173, 0.001);
  EXPECT_NEAR(Reliability::kLlama3CheckpointWritePerGpuBps, 122e6, 1e6);
  // 16 384 GPUs at that rate fail every 3.1 hours, as the paper's 419 in 54 days say.
  EXPECT_NEAR(expected_goodput(Reliability{}, 16384, 0, 1e12).mtbf_s, 54.0 * 86400 / 419, 1);
}

}  // namespace
}  // namespace hetsim
