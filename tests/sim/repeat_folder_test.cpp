// File: tests/sim/repeat_folder_test.cpp
// RepeatFolder: rounds that repeat with some period are held as two periods whose unrolled()
// program is the one written out, task for task; anything that does not repeat, or that a later
// task still needs from two periods back, is kept as written.
#include "sim/repeat_folder.hpp"

#include <gtest/gtest.h>

#include "sim/repeated_step.hpp"

namespace hetsim {
namespace {

// Round r on two devices: a kernel on device 0 after device 0's last one; every third round (if
// `cycle`) also a send to device 1 and a kernel there after it. Durations are those of `duration`
// (round -> seconds). `keep_back`: a later task also waits for the task of two rounds before.
std::string name(int round, const char* what) {
  std::string s = "r";
  s.append(std::to_string(round)).append(what);
  return s;
}

struct Builder {
  bool cycle = false;
  bool keep_back = false;
  bool pending = false;  // every round's kernel is held until the tail (a stage's inbox filling up)
  double (*duration)(int) = [](int) { return 1e-3; };

  Program build(int rounds, bool fold, int max_period = 8) const {
    Program p;
    p.devices.resize(2);
    RepeatFolder folder(p, 2, max_period);
    int last0 = -1, last1 = -1, back = -1, older = -1;
    std::vector<int> waiting;
    const RepeatFolder::HeldTasks held = [&](const std::function<void(int&)>& f) {
      f(last0);
      f(last1);
      for (int& t : waiting) f(t);
      if (keep_back) {
        f(back);
        f(older);
      }
    };
    for (int r = 0; r < rounds; ++r) {
      const int start = static_cast<int>(p.tasks.size());
      std::vector<int> deps;
      if (last0 >= 0) deps.push_back(last0);
      if (keep_back && older >= 0) deps.push_back(older);
      const int k = p.add({name(r, ".k0"), ComputeTask{0, duration(r), 0, 0}, deps});
      older = back;
      back = k;
      last0 = k;
      if (pending) waiting.push_back(k);
      if (cycle && r % 3 == 2) {
        SendTask s;
        s.src = 0;
        s.dst = 1;
        s.size_bytes = 1e6;
        const int send = p.add({name(r, ".send"), s, {k}});
        std::vector<int> d1{send};
        if (last1 >= 0) d1.push_back(last1);
        last1 = p.add({name(r, ".k1"), ComputeTask{1, 2e-3, 0, 0}, d1});
      }
      if (fold) folder.end_round(start, held);
    }
    folder.finish();
    std::vector<int> tail = waiting;
    tail.push_back(last0);
    if (last1 >= 0) tail.push_back(last1);
    p.add({"tail", ComputeTask{0, 1e-3, 0, 0}, tail});
    return p;
  }
};

void expect_same_program(const Program& folded, const Program& written) {
  const Program u = folded.repeated_step ? unrolled(folded) : folded;
  ASSERT_EQ(u.tasks.size(), written.tasks.size());
  for (size_t i = 0; i < u.tasks.size(); ++i) {
    EXPECT_EQ(u.tasks[i].deps, written.tasks[i].deps) << i;
    EXPECT_TRUE(u.tasks[i].body == written.tasks[i].body) << i;
  }
}

TEST(RepeatFolder, OneRoundPeriodIsHeldTwice) {
  const Builder b;
  const Program folded = b.build(100, true), written = b.build(100, false);
  ASSERT_TRUE(folded.repeated_step.has_value());
  EXPECT_EQ(folded.repeated_step->size, 1);
  EXPECT_LT(folded.tasks.size(), 10u);
  expect_same_program(folded, written);
  EXPECT_EQ(validate(folded), "");
}

TEST(RepeatFolder, APeriodOfSeveralRoundsIsFound) {
  // Round sizes 1, 1, 3, 1, 1, 3 ...: a period of three rounds, five tasks.
  Builder b;
  b.cycle = true;
  const Program folded = b.build(300, true), written = b.build(300, false);
  ASSERT_TRUE(folded.repeated_step.has_value());
  EXPECT_EQ(folded.repeated_step->size, 5);
  EXPECT_LT(folded.tasks.size(), 60u);
  expect_same_program(folded, written);
  // A longest period of two rounds cannot hold it: everything is written.
  EXPECT_FALSE(b.build(300, true, 2).repeated_step.has_value());
}

TEST(RepeatFolder, WhatALaterTaskNeedsFromTwoRoundsBackIsNotLeftOut) {
  // Each kernel also waits for the one two rounds before: a period of one round cannot be held
  // (the first of the two would be needed after it left), one of two rounds can.
  Builder b;
  b.keep_back = true;
  const Program folded = b.build(100, true), written = b.build(100, false);
  ASSERT_TRUE(folded.repeated_step.has_value());
  EXPECT_GE(folded.repeated_step->size, 2);
  expect_same_program(folded, written);
}

TEST(RepeatFolder, RoundsStillHeldByTheBuilderAreKept) {
  // The builder holds every kernel for the tail: leaving any round out would point the tail at a
  // round that is not there.
  Builder b;
  b.pending = true;
  const Program folded = b.build(100, true), written = b.build(100, false);
  EXPECT_FALSE(folded.repeated_step.has_value());
  expect_same_program(folded, written);
}

TEST(RepeatFolder, RoundsThatDifferAreKept) {
  Builder b;
  b.duration = [](int r) { return 1e-3 * (1 + r % 7 == 0 ? 2 : 1) + 1e-6 * r; };
  const Program folded = b.build(100, true), written = b.build(100, false);
  EXPECT_FALSE(folded.repeated_step.has_value());
  expect_same_program(folded, written);
  // A change part-way stops the folding there: what follows is written as it is.
  b.duration = [](int r) { return r < 60 ? 1e-3 : 2e-3; };
  const Program changed = b.build(100, true), changed_written = b.build(100, false);
  ASSERT_TRUE(changed.repeated_step.has_value());
  expect_same_program(changed, changed_written);
  EXPECT_GT(changed.tasks.size(), 40u);
}

}  // namespace
}  // namespace hetsim
