// File: tests/cli/summary_lines_test.cpp
// Lines of the terminal summary a new user misread (the docs audit of 2026-12-07): a comparison row
// faster than the chosen plan, two candidates of one shape, "1 candidates", and an MFU change
// printed as a relative change of a percentage.
#include <gtest/gtest.h>

#include <string>

#include "test_support.hpp"

namespace hetsim {
namespace {

std::string out(const std::string& args) { return test::run_hetsim(args, test::Capture::kStdout).output; }

TEST(SummaryLines, AComparisonRowFasterThanTheChosenPlanIsSaidNeverChosen) {
  // bert-base with --no-spmd: dp-proportional (43.53 ms) beat the chosen hybrid plan (48.8 ms), and
  // "chosen" read as if the planner had picked the slower of two.
  const std::string o = out("plan -m bert-base --no-spmd --no-upper-bound");
  EXPECT_NE(o.find("\nnote: dp-proportional ran faster ("), std::string::npos) << o;
  EXPECT_NE(o.find("but the rows below the candidates are comparisons, never chosen"), std::string::npos) << o;
  // Where the chosen plan is the fastest row, nothing is said.
  EXPECT_EQ(out("plan -m bert-base --no-upper-bound").find("ran faster ("), std::string::npos);
}

TEST(SummaryLines, OneCandidateIsOne) {
  EXPECT_NE(out("plan -m bert-base --no-pipeline --no-upper-bound --candidates 1").find("(smallest simulated time of 1 candidate)\n"),
            std::string::npos);
}

TEST(SummaryLines, TwoCandidatesOfOneShapeShowTheirLayerSplits) {
  // The demo's hybrid #2 and #3 printed the same shape at different times; what differed was the
  // layer split, now said for both, and only where shapes repeat. Llama 2 13B on pair-a100-mi300x:
  // two interleaved plans, one with the A100 stage first, one with the MI300X stage first.
  const std::string o = out("plan -c pair-a100-mi300x -m llama2-13b --global-batch 256 --candidates 2 --no-spmd --no-upper-bound");
  const size_t one = o.find("  hetsim hybrid #1 "), two = o.find("  hetsim hybrid #2 ");
  ASSERT_NE(one, std::string::npos) << o;
  ASSERT_NE(two, std::string::npos) << o;
  const std::string l1 = o.substr(one, o.find('\n', one) - one), l2 = o.substr(two, o.find('\n', two) - two);
  const size_t cut1 = l1.find("; layers "), cut2 = l2.find("; layers ");
  ASSERT_NE(cut1, std::string::npos) << l1;
  ASSERT_NE(cut2, std::string::npos) << l2;
  EXPECT_EQ(l1.substr(18, cut1 - 18), l2.substr(18, cut2 - 18));  // one shape
  EXPECT_NE(l1.substr(cut1), l2.substr(cut2));                    // two splits
  const size_t faithful = o.find("  hethub-faithful  ");
  ASSERT_NE(faithful, std::string::npos) << o;
  EXPECT_EQ(o.substr(faithful, o.find('\n', faithful) - faithful).find("; layers"), std::string::npos);  // a shape of its own
}

TEST(SummaryLines, CompareGivesAnMfuChangeInPoints) {
  // 87.9 % -> 72.0 % printed -18.1 % (relative), where a reader expects -15.9 points.
  const std::string o = out("compare simulate -m bert-base --strategy dp-proportional --no-upper-bound --vs --set "
                            "'cluster.node_types[*].nic.bandwidth=10Gbps'");
  const size_t mfu = o.find("\nMFU ");
  ASSERT_NE(mfu, std::string::npos) << o;
  const std::string line = o.substr(mfu + 1, o.find('\n', mfu + 1) - mfu - 1);
  EXPECT_NE(line.find(" pt"), std::string::npos) << line;
  EXPECT_EQ(line.find('%', line.rfind(' ')), std::string::npos) << line;  // the change column is in points
}

}  // namespace
}  // namespace hetsim
