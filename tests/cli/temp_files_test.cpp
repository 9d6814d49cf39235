// File: tests/cli/temp_files_test.cpp
// Temporary files of compare, report --plot, size and sweep: never opened by a predictable name
// in $TMPDIR (a link planted there is not followed), removed after the run, and a TMPDIR that
// cannot hold them is a bad input naming it.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <functional>
#include <sstream>

#include "test_support.hpp"

namespace hetsim {
namespace {

namespace fs = std::filesystem;

struct LinkedRun {
  int rc = -1;
  std::string err;  // stderr
};

// Runs `hetsim -q ARGS` with TMPDIR=tmpdir; before it starts, plants in tmpdir a link to `target`
// under each of `names(pid)`: the names hetsim's temporary files had before issue 35.
LinkedRun run_with_links(const std::vector<std::string>& args, const fs::path& tmpdir, const fs::path& target,
                   const std::function<std::vector<std::string>(pid_t)>& names) {
  const fs::path err_file = fs::temp_directory_path() / ("hetsim-temp-files-test-" + std::to_string(::getpid()) + ".err");
  int go[2];
  EXPECT_EQ(::pipe(go), 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(go[1]);
    char byte = 0;
    if (::read(go[0], &byte, 1) != 1) ::_exit(120);
    ::setenv("TMPDIR", tmpdir.c_str(), 1);
    const int null = ::open("/dev/null", O_WRONLY);
    const int err = ::open(err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ::dup2(null, STDOUT_FILENO);
    ::dup2(err, STDERR_FILENO);
    std::vector<std::string> all{test::hetsim_binary(), "-q"};
    all.insert(all.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& a : all) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(121);
  }
  ::close(go[0]);
  for (const std::string& n : names(pid)) fs::create_symlink(target, tmpdir / n);
  EXPECT_EQ(::write(go[1], "x", 1), 1);
  ::close(go[1]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  LinkedRun r;
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ostringstream s;
  s << std::ifstream(err_file).rdbuf();
  r.err = s.str();
  fs::remove(err_file);
  return r;
}

// A folder for TMPDIR and a file that links planted in it point at.
struct Sandbox {
  fs::path root = fs::temp_directory_path() / ("hetsim-temp-files-test-" + std::to_string(::getpid()));
  fs::path tmpdir = root / "tmp";
  fs::path target = root / "precious";
  Sandbox() {
    fs::remove_all(root);
    fs::create_directories(tmpdir);
    std::ofstream(target) << "precious\n";
  }
  ~Sandbox() { fs::remove_all(root); }
  [[nodiscard]] std::string target_text() const {
    std::ostringstream s;
    s << std::ifstream(target).rdbuf();
    return s.str();
  }
  // What is left in TMPDIR besides the planted links.
  [[nodiscard]] std::vector<std::string> left_over() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(tmpdir)) {
      if (!fs::is_symlink(e.symlink_status())) out.push_back(e.path().filename().string());
    }
    return out;
  }
};

TEST(TempFiles, CompareFollowsNoLinkPlantedAtItsOldReportNames) {
  const Sandbox box;
  const LinkedRun r = run_with_links({"compare", "simulate", "-c", "a100-v100-2x2", "-m", "gpt3-1.3b", "--strategy", "dp-even", "--vs",
                                "--set", "cluster.node_types[*].nic.bandwidth=10Gbps"},
                               box.tmpdir, box.target, [](pid_t pid) {
                                 const std::string p = "hetsim-compare-" + std::to_string(pid);
                                 return std::vector<std::string>{p + "-A.json", p + "-B.json"};
                               });
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(box.target_text(), "precious\n");
  EXPECT_TRUE(box.left_over().empty());
}

TEST(TempFiles, ReportPlotFollowsNoLinkPlantedAtItsOldCsvName) {
  const Sandbox box;
  const fs::path db = box.root / "r.db", png = box.root / "r.png";
  test::write_small_results_db(db);
  const LinkedRun r = run_with_links({"report", db.string(), "--plot", png.string()}, box.tmpdir, box.target, [](pid_t pid) {
    return std::vector<std::string>{"hetsim-report-" + std::to_string(pid) + ".csv"};
  });
  // Without matplotlib the plot fails (exit 1) after the table is written: the link matters the same.
  EXPECT_TRUE(r.rc == 0 || r.err.find("needs python3 with matplotlib") != std::string::npos) << r.err;
  EXPECT_EQ(box.target_text(), "precious\n");
  EXPECT_TRUE(box.left_over().empty());
}

TEST(TempFiles, SizeFollowsNoLinkPlantedAtItsOldProbeName) {
  const Sandbox box;
  const fs::path sizing = test::source_dir() / "tests/fixtures/sizing/small.yaml";
  const LinkedRun r = run_with_links({"size", sizing.string(), "--db", (box.root / "s.db").string()}, box.tmpdir, box.target, [](pid_t pid) {
    const std::string p = std::to_string(pid);
    return std::vector<std::string>{"hetsim-sizing-probe-" + p + ".yaml", "hetsim-size-" + p + ".csv"};
  });
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(box.target_text(), "precious\n");
  EXPECT_TRUE(box.left_over().empty());
}

TEST(TempFiles, AMissingTmpdirIsABadInputNamingIt) {
  const Sandbox box;
  const fs::path missing = box.root / "missing";
  const std::string expect = "TMPDIR=" + missing.string() + ": error: cannot make a temporary folder here: No such file or directory";
  const fs::path study = box.root / "s.yaml";
  std::ofstream(study) << "name: t\ncluster: a100-v100-2x2\nmodel: gpt3-1.3b\nrun: simulate\nstrategy: dp-even\n"
                          "vary:\n  - set: model.training.global_batch\n    values: [128, 256]\n";
  const std::vector<std::vector<std::string>> commands{
      {"compare", "simulate", "-c", "a100-v100-2x2", "-m", "gpt3-1.3b", "--vs", "--strategy", "dp-even"},
      {"sweep", study.string(), "--db", (box.root / "s.db").string()},
      {"size", (test::source_dir() / "tests/fixtures/sizing/small.yaml").string(), "--db", (box.root / "z.db").string()},
  };
  for (const auto& args : commands) {
    const LinkedRun r = run_with_links(args, missing, box.target, [](pid_t) { return std::vector<std::string>{}; });
    EXPECT_EQ(r.rc, 2) << args[0] << ": " << r.err;
    EXPECT_NE(r.err.find(expect), std::string::npos) << args[0] << ": " << r.err;
  }
}

}  // namespace
}  // namespace hetsim
