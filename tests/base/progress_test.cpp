// File: tests/base/progress_test.cpp
// The progress bar: nothing before its quiet period, a line each tenth of the way off a terminal,
// the ETA from the pace so far (or since the first unit, past a set-up, once that pace spans the
// set-up or a second), and the last count drawn by
// finish() where it was held back.
#include "base/progress.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "base/log.hpp"

namespace hetsim {
namespace {

// Each test draws at the info level and leaves the level as it found it.
struct AtInfoLevel {
  LogLevel before = log_level();
  AtInfoLevel() { set_log_level(LogLevel::kInfo); }
  ~AtInfoLevel() { set_log_level(before); }
};

// The line of `text` that holds `what` ("" when none).
std::string line_with(const std::string& text, const std::string& what) {
  const size_t at = text.find(what);
  if (at == std::string::npos) return "";
  const size_t begin = text.rfind('\n', at), end = text.find('\n', at);
  return text.substr(begin == std::string::npos ? 0 : begin + 1, end - (begin == std::string::npos ? 0 : begin + 1));
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The tests run with stderr captured (a file, not a terminal): the line-per-tenth form.
TEST(Progress, OffATerminalALineEachTenthAndTheEnd) {
  const AtInfoLevel info;
  testing::internal::CaptureStderr();
  Progress bar(100, "things");
  for (size_t i = 1; i <= 100; ++i) bar.update(i);
  bar.finish();
  const std::string out = testing::internal::GetCapturedStderr();
  EXPECT_EQ(count(out, "\n"), 10u) << out;  // 10/100, 20/100, ..., 100/100
  EXPECT_EQ(line_with(out, "10/100").rfind("hetsim: [===                           ] 10/100 things, ", 0), 0u) << out;
  EXPECT_NE(line_with(out, "10/100").find(", ETA "), std::string::npos) << out;
  EXPECT_EQ(line_with(out, "100/100").find("ETA"), std::string::npos) << out;  // done: no ETA
}

TEST(Progress, OffATerminalASlowTenthStillGivesALineEveryFewSeconds) {
  // 1000 units, the first tenth slow: a line as soon as a span has passed since the last one,
  // not silence until the tenth (the span is 30 s in use; 0.5 s here).
  const AtInfoLevel info;
  testing::internal::CaptureStderr();
  Progress bar(1000, "simulations");
  bar.line_every(0.5);
  bar.update(1);   // the first span has not passed: nothing yet
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  bar.update(2);   // one span since the bar began: a line
  bar.update(3);   // right after it: none
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  bar.update(4);   // a span since that line: another
  const std::string out = testing::internal::GetCapturedStderr();
  EXPECT_EQ(count(out, "\n"), 2u) << out;
  EXPECT_NE(out.find(" 2/1000 simulations, "), std::string::npos) << out;
  EXPECT_NE(out.find(" 4/1000 simulations, "), std::string::npos) << out;
  EXPECT_EQ(out.find(" 1/1000 "), std::string::npos) << out;
  EXPECT_EQ(out.find(" 3/1000 "), std::string::npos) << out;
  bar.finish();
}

TEST(Progress, TheLastCountToldAgainIsDrawnOnce) {
  // A simulation tells its count as it goes and once more at the end: the end is one line.
  const AtInfoLevel info;
  testing::internal::CaptureStderr();
  Progress bar(1, "tasks");
  bar.update(1);
  bar.update(1);
  bar.finish();
  const std::string out = testing::internal::GetCapturedStderr();
  EXPECT_EQ(count(out, "1/1 tasks"), 1u) << out;
}

TEST(Progress, NothingBeforeItsQuietPeriodThenTheBarAndItsLastCount) {
  const AtInfoLevel info;
  testing::internal::CaptureStderr();
  {
    Progress quick(10, "steps", 60);  // done long before a minute: never shown
    for (size_t i = 1; i <= 10; ++i) quick.update(i);
    quick.finish();
  }
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  testing::internal::CaptureStderr();
  Progress slow(10, "steps", 1);
  slow.update(1);  // within the quiet period: held
  std::this_thread::sleep_for(std::chrono::milliseconds(1050));
  slow.update(5, "1 failed");  // past it: drawn, with its ETA from the pace so far
  slow.update(5, "1 failed");  // the same tenth again: not drawn twice
  slow.update(6);              // a tenth further on
  slow.finish();               // the last count was drawn: nothing more
  const std::string out = testing::internal::GetCapturedStderr();
  EXPECT_EQ(count(out, "\n"), 2u) << out;
  EXPECT_EQ(out.find("1/10"), std::string::npos) << out;
  EXPECT_NE(line_with(out, "] 5/10 steps, 1 failed, ").find(", ETA "), std::string::npos) << out;
  EXPECT_NE(line_with(out, "] 6/10 steps, ").find(", ETA "), std::string::npos) << out;
}

TEST(Progress, PacedFromTheFirstUnitTheSetUpDoesNotCount) {
  // Two bars updated at the same moments: 0.6 s of set-up before the first of 100 units, then 10
  // more in 1.2 s. At 11 done the pace since the bar began says 1.8 s / 11 x 89 = 14.6 s left, the
  // pace since the first unit 1.2 s / 10 x 89 = 10.7 s (the work's own, what a large set of
  // transfers shows once its flows run). Late wake-ups on a loaded machine move both alike.
  const AtInfoLevel info;
  testing::internal::CaptureStderr();
  Progress plain(100, "plain units"), paced(100, "paced units");
  paced.pace_from_first_unit();
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  plain.update(1);
  paced.update(1);
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  plain.update(11);
  paced.update(11);
  plain.finish();
  paced.finish();
  const std::string out = testing::internal::GetCapturedStderr();
  const auto eta = [&](const std::string& what) {
    const std::string line = line_with(out, "] 11/100 " + what);
    EXPECT_NE(line.find(", ETA "), std::string::npos) << out;
    return line.find(", ETA ") == std::string::npos ? -1 : std::stoi(line.substr(line.find(", ETA ") + 6));
  };
  const int since_first = eta("paced units"), since_start = eta("plain units");
  EXPECT_GE(since_first, 10) << out;  // at least 1.2 s / 10 x 89 = 10.7 s
  EXPECT_GE(since_start, 14) << out;  // at least 1.8 s / 11 x 89 = 14.6 s
  EXPECT_LT(since_first, since_start) << out;
}

TEST(Progress, AfterALongSetUpThePaceSinceTheFirstUnitOnceItSpansASecond) {
  // 2.2 s of set-up before the first of 100 units; 0.3 s later 10 are done (no ETA yet: the pace
  // spans less than a second), 1.1 s later 21: the span is shorter than the set-up but past a
  // second, so the ETA is 1.1 s / 20 x 79 = 4.3 s, not the 3.3 s / 21 x 79 = 12.4 s of the pace
  // since the bar began. Late wake-ups on a loaded machine lengthen the span, so the ETA.
  const AtInfoLevel info;
  testing::internal::CaptureStderr();
  Progress paced(100, "paced units");
  paced.pace_from_first_unit();
  std::this_thread::sleep_for(std::chrono::milliseconds(2200));
  paced.update(1);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  paced.update(10);  // a tenth: drawn
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  paced.update(21);  // two tenths: drawn
  paced.finish();
  const std::string out = testing::internal::GetCapturedStderr();
  EXPECT_EQ(line_with(out, "] 10/100 paced").find(", ETA "), std::string::npos) << out;
  const std::string line = line_with(out, "] 21/100 paced");
  ASSERT_NE(line.find(", ETA "), std::string::npos) << out;
  const int eta = std::stoi(line.substr(line.find(", ETA ") + 6));
  EXPECT_GE(eta, 4) << out;
  EXPECT_LT(eta, 12) << out;
}

TEST(Progress, QuietUnderDashQ) {
  const AtInfoLevel info;
  set_log_level(LogLevel::kQuiet);
  testing::internal::CaptureStderr();
  Progress bar(4, "things");
  for (size_t i = 1; i <= 4; ++i) bar.update(i);
  bar.finish();
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

}  // namespace
}  // namespace hetsim
