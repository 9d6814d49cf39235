// File: tests/sim/repeated_step_test.cpp
// Program::repeated_step: two copies simulated and extended by the copies left out give the times
// of the program with every copy written out; copies that are not periodic are written out.
#include "sim/repeated_step.hpp"

#include <gtest/gtest.h>

#include "sim/critical_path.hpp"
#include "test_support.hpp"
#include "sim/executor.hpp"

namespace hetsim {
namespace {

constexpr double kActivationBytes = 2e9;

// Accumulation steps on GPUs 0, 1 (node 0) and 8 (node 1) of unequal speed: each computes its
// forward, a blocking all-reduce over the three, its backward; the last step's all-reduce of the
// gradients overlaps an optimizer-like tail. With `fold`, steps 1 and 2 are the repeated pair
// (`prefix`) or steps 0 and 1 (after a short warm-up on each GPU).
Program steps_program(const Cluster& c, long steps, bool fold, bool prefix = true) {
  Program p;
  p.devices.resize(c.gpu_count());
  const std::vector<int> gpus{0, 1, 8};
  const std::vector<double> speed{1.0, 1.6, 2.3};
  std::vector<int> last(c.gpu_count(), -1);
  auto step = [&](long k, bool final_step) {
    std::vector<int> fwd;
    for (size_t i = 0; i < gpus.size(); ++i) {
      std::vector<int> deps;
      if (last[gpus[i]] >= 0) deps.push_back(last[gpus[i]]);
      fwd.push_back(p.add({"gpu" + std::to_string(gpus[i]) + ".mb" + std::to_string(k) + ".fwd",
                           ComputeTask{gpus[i], 0.010 * speed[i], 0, kActivationBytes}, deps}));
    }
    const int ar = p.add({"mb" + std::to_string(k) + ".allreduce", collective(CollectiveOp::kAllReduce, gpus, 64e6), fwd});
    std::vector<int> bwd;
    for (size_t i = 0; i < gpus.size(); ++i) {
      bwd.push_back(p.add({"gpu" + std::to_string(gpus[i]) + ".mb" + std::to_string(k) + ".bwd",
                           ComputeTask{gpus[i], 0.020 * speed[i], 0, -kActivationBytes}, {ar, fwd[i]}}));
      last[gpus[i]] = bwd.back();
    }
    if (final_step) {
      const int sync = p.add({"grad.allreduce", collective(CollectiveOp::kAllReduce, gpus, 512e6), bwd});
      for (int g : gpus) p.add({"gpu" + std::to_string(g) + ".optimizer", ComputeTask{g, 0.004, 0, 0}, {sync}});
    }
  };
  const long first_copy = prefix ? 1 : 0;
  if (!prefix) {
    for (int g : gpus) last[g] = p.add({"gpu" + std::to_string(g) + ".warmup", ComputeTask{g, 0.001, 0, 0}, {}});
  }
  if (!fold) {
    for (long k = 0; k < steps; ++k) step(k, k + 1 == steps);
    return p;
  }
  if (prefix) step(0, false);
  const int first = static_cast<int>(p.tasks.size());
  step(first_copy, false);
  const int size = static_cast<int>(p.tasks.size()) - first;
  step(first_copy + 1, false);
  p.repeated_step = RepeatedStep{first, size, steps - 1 - (first_copy + 2)};
  step(steps - 1, true);
  return p;
}

class RepeatedSteps : public ::testing::Test {
 protected:
  Cluster cluster_ = test::shipped_cluster("a100-8x8");
};

void expect_same_devices(const SimResult& x, const SimResult& y) {
  ASSERT_EQ(x.devices.size(), y.devices.size());
  const double tol = 1e-9 * y.iteration_time_s;
  for (size_t d = 0; d < y.devices.size(); ++d) {
    EXPECT_NEAR(x.devices[d].compute_s, y.devices[d].compute_s, tol) << d;
    EXPECT_NEAR(x.devices[d].comm_s, y.devices[d].comm_s, tol) << d;
    EXPECT_NEAR(x.devices[d].busy_s, y.devices[d].busy_s, tol) << d;
    EXPECT_DOUBLE_EQ(x.devices[d].peak_memory_bytes, y.devices[d].peak_memory_bytes) << d;
  }
}

TEST_F(RepeatedSteps, TwoCopiesExtendedGiveTheTimesOfEveryCopy) {
  const long steps = 12;
  const Program folded = steps_program(cluster_, steps, true);
  const Program full = steps_program(cluster_, steps, false);
  ASSERT_EQ(validate(folded), "");
  const SimResult once = simulate(folded, cluster_);
  const SimResult all = simulate(full, cluster_);
  EXPECT_GT(once.repeat_gap_s, 0);
  EXPECT_LT(once.activities * 2, all.activities);
  EXPECT_NEAR(once.iteration_time_s, all.iteration_time_s, 1e-9 * all.iteration_time_s);
  expect_same_devices(once, all);
  EXPECT_DOUBLE_EQ(once.devices[0].peak_memory_bytes, kActivationBytes);  // one step's activations at a time
  // The tasks after the copies carry their real times.
  const size_t after = folded.tasks.size() - full.tasks.size() + full.tasks.size();
  for (size_t i = 1; i <= 5; ++i) {
    EXPECT_NEAR(once.tasks[after - i].end_s, all.tasks[full.tasks.size() - i].end_s, 1e-9 * all.iteration_time_s) << i;
  }
  // The critical path covers the whole iteration, the left-out copies included.
  double on_path = 0;
  for (const auto& [kind, s] : critical_path(folded, once).by_kind) on_path += s;
  EXPECT_NEAR(on_path, once.iteration_time_s, 1e-9 * once.iteration_time_s);
}

TEST_F(RepeatedSteps, EveryStepWritesTheCopiesOut) {
  const Program folded = steps_program(cluster_, 9, true);
  const Program full = steps_program(cluster_, 9, false);
  const Program out = unrolled(folded);
  ASSERT_EQ(out.tasks.size(), full.tasks.size());
  EXPECT_FALSE(out.repeated_step.has_value());
  for (size_t i = 0; i < full.tasks.size(); ++i) EXPECT_EQ(out.tasks[i].deps, full.tasks[i].deps) << i;
  SimOptions every;
  every.every_step = true;
  const SimResult written = simulate(folded, cluster_, every);
  const SimResult all = simulate(full, cluster_);
  ASSERT_EQ(written.tasks.size(), folded.tasks.size());
  EXPECT_DOUBLE_EQ(written.iteration_time_s, all.iteration_time_s);
  EXPECT_DOUBLE_EQ(written.tasks.back().end_s, all.tasks.back().end_s);
  expect_same_devices(written, all);
}

TEST_F(RepeatedSteps, CopiesWrittenOutInPartKeepTheRestForTheSameRule) {
  // unrolled(p, k) writes k of the left-out copies and makes its last two written copies the
  // repeated pair: writing the rest out from there gives the program with every copy written out.
  const Program folded = steps_program(cluster_, 12, true);
  const Program full = unrolled(folded);
  const long more = folded.repeated_step->more;
  for (long k : {0L, 1L, 2L, 5L, more - 1}) {
    SCOPED_TRACE(k);
    const Program part = unrolled(folded, k);
    ASSERT_TRUE(part.repeated_step.has_value());
    EXPECT_EQ(part.repeated_step->more, more - k);
    EXPECT_EQ(part.repeated_step->first, folded.repeated_step->first + static_cast<int>(k) * folded.repeated_step->size);
    EXPECT_EQ(part.tasks.size(), folded.tasks.size() + static_cast<size_t>(k * folded.repeated_step->size));
    ASSERT_EQ(validate(part), "");
    const Program rest = unrolled(part);
    ASSERT_EQ(rest.tasks.size(), full.tasks.size());
    for (size_t i = 0; i < full.tasks.size(); ++i) {
      EXPECT_EQ(rest.tasks[i].deps, full.tasks[i].deps) << i;
      EXPECT_EQ(rest.tasks[i].label, full.tasks[i].label) << i;
    }
    // Its simulation, taken back to `folded`'s tasks, is that of every copy.
    const SimResult r = folded_result(folded, part, simulate(part, cluster_), k);
    const SimResult all = folded_result(folded, full, simulate(full, cluster_));
    ASSERT_EQ(r.tasks.size(), folded.tasks.size());
    EXPECT_NEAR(r.iteration_time_s, all.iteration_time_s, 1e-9 * all.iteration_time_s);
    EXPECT_NEAR(r.repeat_gap_s, all.repeat_gap_s, 1e-9 * all.iteration_time_s);
    EXPECT_NEAR(r.tasks.back().end_s, all.tasks.back().end_s, 1e-9 * all.iteration_time_s);
  }
  EXPECT_FALSE(unrolled(folded, more).repeated_step.has_value());
}

TEST_F(RepeatedSteps, CopiesThatAreNotYetPeriodicAreWrittenOut) {
  // Steps 0 and 1 as the pair: step 0 starts every GPU after the same warm-up, step 1 each when its backward ends
  // (unequal speeds), so the second is not the first shifted by one period.
  const Program folded = steps_program(cluster_, 10, true, false);
  const Program full = steps_program(cluster_, 10, false, false);
  Program two = folded;
  two.repeated_step.reset();
  SimResult r = simulate(two, cluster_);
  const SimResult before = r;
  EXPECT_FALSE(extend_by_repeats(folded, r));
  EXPECT_EQ(r.iteration_time_s, before.iteration_time_s);
  const SimResult once = simulate(folded, cluster_);
  const SimResult all = simulate(full, cluster_);
  EXPECT_DOUBLE_EQ(once.iteration_time_s, all.iteration_time_s);
  expect_same_devices(once, all);
}

// Steps on GPU 0 of a100-8x8: a compute, then its output sent to GPU 8 (node 1) over the NIC
// beside the next step's compute. After the last step a larger transfer on another stream leaves
// at once and shares the NIC with that step's send (with `fold`, steps 1 and 2 are the repeated
// pair): a copy inside sends alone, the last one beside what follows it.
Program send_steps_program(long steps, bool fold) {
  Program p;
  p.devices.resize(64);
  int last = -1;
  auto step = [&](long k) {
    const int c = p.add({"mb" + std::to_string(k) + ".compute", ComputeTask{0, 0.020, 0, 0}, last < 0 ? std::vector<int>{} : std::vector<int>{last}});
    p.add({"mb" + std::to_string(k) + ".send", SendTask{0, 8, 100e6, CommStream::kPipeline}, {c}});
    last = c;
  };
  step(0);
  const int first = static_cast<int>(p.tasks.size());
  if (!fold) {
    for (long k = 1; k < steps; ++k) step(k);
  } else {
    step(1);
    const int size = static_cast<int>(p.tasks.size()) - first;
    step(2);
    p.repeated_step = RepeatedStep{first, size, steps - 3};
  }
  p.add({"tail.send", SendTask{0, 8, 400e6, CommStream::kData}, {last}});
  p.add({"tail.compute", ComputeTask{0, 0.005, 0, 0}, {last}});
  return p;
}

TEST_F(RepeatedSteps, ALastCopyThatMeetsTheWorkAfterItStillExtends) {
  const Program folded = send_steps_program(40, true);
  const Program full = send_steps_program(40, false);
  ASSERT_EQ(validate(folded), "");
  // The two copies as written are not periodic: the second's send shares the NIC with the tail.
  Program two = folded;
  two.repeated_step.reset();
  const SimResult r = simulate(two, cluster_);
  EXPECT_FALSE(copy_period(folded, r).has_value());
  EXPECT_TRUE(deviations_meet_what_follows(folded, r));
  Program three = unrolled(folded, 1);
  three.repeated_step.reset();
  const SimResult next = simulate(three, cluster_);
  const std::optional<double> period = boundary_copy_period(folded, r, next);
  ASSERT_TRUE(period.has_value());
  EXPECT_NEAR(*period, 0.020, 1e-12);
  // Extended by the copies left out, they give the times of every step written out, from two
  // simulations of three and four steps rather than one of forty.
  const SimResult once = simulate(folded, cluster_);
  const SimResult all = simulate(full, cluster_);
  EXPECT_LT(once.activities * 4, all.activities);
  EXPECT_NEAR(once.iteration_time_s, all.iteration_time_s, 1e-9 * all.iteration_time_s);
  expect_same_devices(once, all);
  EXPECT_NEAR(once.tasks.back().end_s, all.tasks.back().end_s, 1e-9 * all.iteration_time_s);
  // Where the copy now inside does not repeat the one before it, the copies are not extended.
  SimResult skewed = next;
  skewed.tasks[static_cast<size_t>(folded.repeated_step->first + folded.repeated_step->size)].end_s += 1e-3;
  EXPECT_FALSE(boundary_copy_period(folded, r, skewed).has_value());
}

TEST_F(RepeatedSteps, ARepeatedStepOutOfRangeIsAPlannerBug) {
  Program p = steps_program(cluster_, 8, true);
  p.repeated_step->size = static_cast<int>(p.tasks.size());
  EXPECT_EQ(validate(p), "repeated step out of range");
  EXPECT_THROW((void)simulate(p, cluster_), std::logic_error);
}

}  // namespace
}  // namespace hetsim

namespace hetsim {
namespace {

// Copies that nearly repeat: the two simulated copies of steps_program with the second's tasks
// moved by a little (as flows drifting against each other do), the rest extrapolated with a bound.
TEST_F(RepeatedSteps, NearlyPeriodicCopiesAreExtrapolatedWithABound) {
  const Program folded = steps_program(cluster_, 10, true);  // 6 copies left out, 7 tasks each
  Program two = folded;
  two.repeated_step.reset();
  const SimResult exact = simulate(two, cluster_);
  const RepeatedStep rs = *folded.repeated_step;
  const size_t a = static_cast<size_t>(rs.first), b = a + static_cast<size_t>(rs.size), c = b + static_cast<size_t>(rs.size);
  auto last_end = [](const SimResult& r, size_t from, size_t to) {
    double e = 0;
    for (size_t i = from; i < to; ++i) e = std::max(e, r.tasks[i].end_s);
    return e;
  };
  auto jittered = [&](double shift) {
    SimResult r = exact;
    r.tasks[b + 1].start_s += shift;  // one task of the second copy, off its period
    r.tasks[b + 1].end_s += shift;
    return r;
  };
  const double jitter = 2e-6;
  SimResult r = jittered(jitter);
  const double period = last_end(r, b, c) - last_end(r, a, b);
  const double after = r.tasks.back().end_s;
  ASSERT_TRUE(extrapolate_repeats(folded, r));
  EXPECT_EQ(r.extrapolated_copies, rs.more);
  EXPECT_NEAR(r.extrapolation_bound_s, static_cast<double>(rs.more) * jitter, 1e-12);
  EXPECT_DOUBLE_EQ(r.repeat_gap_s, static_cast<double>(rs.more) * period);
  EXPECT_DOUBLE_EQ(r.tasks.back().end_s, after + static_cast<double>(rs.more) * period);  // what follows moves
  // The bound would pass 0.5 % of the iteration: written out instead, the result untouched.
  SimResult far = jittered(kMostExtrapolated * exact.iteration_time_s);
  const double far_end = far.iteration_time_s;
  EXPECT_FALSE(extrapolate_repeats(folded, far));
  EXPECT_EQ(far.iteration_time_s, far_end);
  EXPECT_EQ(far.extrapolated_copies, 0);
  // Fewer tasks left out than simulated: cheaper to write them out exactly.
  const Program few = steps_program(cluster_, 5, true);  // 1 copy left out
  Program few_two = few;
  few_two.repeated_step.reset();
  SimResult f = simulate(few_two, cluster_);
  const size_t fb = static_cast<size_t>(few.repeated_step->first + few.repeated_step->size);
  f.tasks[fb + 1].end_s += jitter;
  EXPECT_FALSE(extrapolate_repeats(few, f));
  // A program whose copies repeat exactly is never extrapolated.
  EXPECT_EQ(simulate(folded, cluster_).extrapolated_copies, 0);
}

}  // namespace
}  // namespace hetsim

namespace hetsim {
namespace {

// Copies that never settle (as the pipelines of MoE plans whose flows drift against each other):
// what the tries simulate before the full run stays within half of it, even where much of the
// program lies outside the repeated step and every try repeats it.
TEST_F(RepeatedSteps, TriesOfCopiesThatNeverSettleCostAtMostHalfTheFullRun) {
  Program folded = steps_program(cluster_, 200, true);  // 196 copies left out, 7 tasks each
  int last = -1;
  for (int i = 0; i < 300; ++i) {  // work after the copies, on a GPU of its own: repeated by every try
    last = folded.add({"other" + std::to_string(i), ComputeTask{3, 1e-4, 0, 0}, last < 0 ? std::vector<int>{} : std::vector<int>{last}});
  }
  ASSERT_EQ(validate(folded), "");
  const RepeatedStep rs = *folded.repeated_step;
  const size_t second = static_cast<size_t>(rs.first + rs.size);
  std::vector<size_t> sizes;
  const auto drifting = [&](const Program& p) {
    sizes.push_back(p.tasks.size());
    SimResult r = simulate(p, cluster_);
    if (p.repeated_step) {  // a try: the second copy off its period, by more than extrapolation allows
      r.tasks[second + 1].start_s += 5e-3;
      r.tasks[second + 1].end_s += 5e-3;
    }
    return r;
  };
  const SimResult r = simulate_folded(folded, drifting);
  const size_t full = folded.tasks.size() + static_cast<size_t>(rs.more * rs.size);
  ASSERT_GE(sizes.size(), 2U);
  EXPECT_EQ(sizes.back(), full);  // written out in the end
  size_t tried = 0;
  for (size_t i = 0; i + 1 < sizes.size(); ++i) tried += sizes[i];
  EXPECT_LE(2 * tried, full);
  EXPECT_EQ(r.extrapolated_copies, 0);
  EXPECT_DOUBLE_EQ(r.iteration_time_s, simulate(unrolled(folded), cluster_).iteration_time_s);
}

}  // namespace
}  // namespace hetsim
