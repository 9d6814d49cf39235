// File: tests/cli/text_from_inputs_test.cpp
// Text that comes from inputs (names, axis values, error messages): refused at load when it is
// not UTF-8, and escaped in every output (terminal, Markdown, CSV) so that a control character,
// a terminal escape, a '|' or a newline cannot break a table or the terminal.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "base/text.hpp"
#include "studies/sweep/results_db.hpp"
#include "test_support.hpp"

namespace hetsim {
namespace {

namespace fs = std::filesystem;

using test::temp;

TEST(Printable, EscapesControlsBidiAndBytesThatAreNotUtf8AndKeepsTheRest) {
  EXPECT_EQ(printable("A100 × 8, ≥ 1 µs"), "A100 × 8, ≥ 1 µs");
  EXPECT_EQ(printable("a\x1b[31mb\n\tc\r\x7f"), "a\\x1B[31mb\\n\\tc\\r\\x7F");
  EXPECT_EQ(printable("x\xff y\xc3"), "x\\xFF y\\xC3");
  EXPECT_EQ(printable("\xc2\x85 \xe2\x80\xae"), "\\u{0085} \\u{202E}");  // NEL (C1), right-to-left override
  // Invisible ones: a zero-width space, a byte-order mark, a soft hyphen ("a100" and "a\u200b100" print alike).
  EXPECT_EQ(printable("a\xe2\x80\x8b" "100 \xef\xbb\xbf\xc2\xad"), "a\\u{200B}100 \\u{FEFF}\\u{00AD}");
  EXPECT_EQ(utf8_error("ok ×"), std::nullopt);
  EXPECT_EQ(utf8_error("ab\xc0\xaf"), 2u);      // an overlong '/'
  EXPECT_EQ(utf8_error("\xed\xa0\x80"), 0u);    // a surrogate
  EXPECT_EQ(markdown_cell("a|b\nc"), "a\\|b\\nc");
  EXPECT_EQ(csv_field("a,\"b\"\n"), "\"a,\"\"b\"\"\\n\"");
}

TEST(ReportOutput, AxisValuesAndErrorsFromInputsAreEscapedInEveryFormat) {
  const fs::path db = temp("r.db");
  fs::remove(db);
  {
    ResultsDb w(db);
    ScenarioRow row;
    row.scenario = std::string("k");
    row.study = std::string("s");
    row.axes = std::string(R"({"cluster.name": "a|b\nc\u001b[31m"})");
    row.status = std::string("error");
    row.error = std::string("bad name \x1b]0;pwned\x07");
    w.put(row);
  }
  const auto lines = [](const std::string& s) { return std::count(s.begin(), s.end(), '\n'); };
  const test::CliRun md = test::run_hetsim("report " + db.string() + " --markdown", test::Capture::kStdout);
  ASSERT_EQ(md.rc, 0);
  EXPECT_EQ(lines(md.output), 3) << md.output;  // header, rule, one row: the '|' and newline split nothing
  EXPECT_NE(md.output.find("| a\\|b\\nc\\x1B[31m |"), std::string::npos) << md.output;
  for (const char* format : {"", "--csv", "--markdown"}) {
    const test::CliRun r = test::run_hetsim("report " + db.string() + " " + format, test::Capture::kStdout);
    EXPECT_EQ(r.rc, 0) << format;
    EXPECT_EQ(r.output.find('\x1b'), std::string::npos) << format << ": " << r.output;
    EXPECT_EQ(r.output.find('\x07'), std::string::npos) << format << ": " << r.output;
    EXPECT_NE(r.output.find("bad name \\x1B]0;pwned\\x07"), std::string::npos) << format << ": " << r.output;
  }
  const test::CliRun csv = test::run_hetsim("report " + db.string() + " --csv", test::Capture::kStdout);
  EXPECT_EQ(lines(csv.output), 2) << csv.output;  // header and one row
  fs::remove(db);
}

TEST(StudyFile, AnAxisValueThatIsNotUtf8IsRefusedAtLoadWithItsPlace) {
  // It ran, then every scenario's result died in the JSON library, and every resume did again.
  const fs::path study = temp("s.yaml"), db = temp("s.db");
  std::ofstream(study) << "name: u\ncluster: a100-v100-2x2\nmodel: gpt3-1.3b\nrun: simulate\nstrategy: dp-even\n"
                          "vary:\n  - set: cluster.node_types[0].name\n    values: [ok, \"x\xff\"]\n";
  const test::CliRun r = test::run_hetsim("sweep " + study.string() + " --db " + db.string(), test::Capture::kStderr);
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.output, study.string() + ":8:18: error: vary[0].values[1]: is not valid UTF-8 (byte 2 of the text is 0xFF); "
                                       "hetsim reads every input as UTF-8\n");
  EXPECT_FALSE(fs::exists(db));
  fs::remove(study);
}

}  // namespace
}  // namespace hetsim
