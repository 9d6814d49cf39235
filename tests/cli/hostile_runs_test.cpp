// File: tests/cli/hostile_runs_test.cpp
// Inputs an attacker's audit found ending in an internal error, a crash or a lost file (2026-12-02):
// each is now bad input (exit 2, the file and field named) and leaves every file as it was.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "kernels_profile/calibration_profile.hpp"
#include "asan.hpp"
#include "cli/scratch_dir.hpp"
#include "test_support.hpp"

namespace hetsim {
namespace {

namespace fs = std::filesystem;

using Dir = test::ScratchDir;

std::string slurp(const std::string& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

test::CliRun stderr_of(const std::string& args) { return test::run_hetsim(args, test::Capture::kStderr); }

TEST(HostileRuns, ALayerWiderThanANodeAndAnAlgorithmTheFabricLacksAreBadInput) {
  const Dir d;
  const std::string layer = d.write("layer.yaml",
                                    "- name: wide\n  source: s\n  cluster: a100-8x8\n  layer: {model: gpt3-1.3b, tp: 16, micro_batch: 1}\n"
                                    "  measured: {forward_s: 0.01}\n");
  test::CliRun r = stderr_of("validate --runs " + layer);
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.output.find("layer.yaml:4:33: error: [0].layer.tp: tp 16 is wider than a node of a100-8x8 (8 GPUs)"), std::string::npos) << r.output;
  // NVLink SHARP on an A100 node: SimGrid's actor died on a route the fabric has not (SIGABRT).
  const std::string nvls = d.write("nvls.yaml",
                                   "- name: nvls\n  source: s\n  cluster: a100-8x8\n"
                                   "  collective: {op: allreduce, size: 1MiB, group: 0-7, algorithm: nvls}\n  measured: {busbw_Bps: 1e11}\n");
  r = stderr_of("validate --runs " + nvls);
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.output.find("nvls.yaml:4:66: error: [0].collective.algorithm: nvls cannot run allreduce here"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("internal error"), std::string::npos) << r.output;
}

TEST(HostileRuns, NoCommandWritesOverAFileItReads) {
  const Dir d;
  const std::string runs = d.write("runs.yaml",
                                   "- name: ar\n  source: s\n  cluster: a100-8x8\n  collective: {op: allreduce, size: 1GiB, group: 0-7}\n"
                                   "  measured: {busbw_Bps: 2e11}\n");
  const std::string cluster = d.write("c.yaml", slurp(test::shipped("topologies", "a100-8x8").string()));
  CalibrationProfile p;
  p.name = "mine";
  p.software = "s";
  p.fitted = "2026-12-02";
  p.devices = {"A100-SXM4-40GB"};
  p.parameters = {{"gemm_time_excess", 0.1, 0.01}};
  p.fitted_on = {"ar"};
  const std::string profile = d.write("p.yaml", calibration_profile_text(p));
  const std::string x = (d.path / "x.json").string();
  const struct {
    std::string args, message;
  } cases[] = {
      {"simulate --no-upper-bound -m bert-base --calibration " + profile + " --report " + profile,
       "--report: error: " + profile + " is the calibration profile this run reads; it would be overwritten"},
      {"calibrate --runs " + runs + " --out " + runs + " --software s --parameters intra_time_excess",
       "--out: error: " + runs + " is a run file this run reads; it would be overwritten"},
      {"validate --runs " + runs + " --report " + runs, "--report: error: " + runs + " is a run file this run reads; it would be overwritten"},
      {"validate --runs " + runs + " --report " + x + " --markdown " + x,
       "--markdown: error: " + x + " is also given to --report; one would overwrite the other"},
      {"collective -c " + cluster + " --report " + cluster, "--report: error: " + cluster + " is the cluster this run reads; it would be overwritten"},
      {"collective -c " + cluster + " --report " + x + " --trace " + x,
       "--trace: error: " + x + " is also given to --report; one would overwrite the other"},
      {"reshard -c " + cluster + " --src 0-3 --src-shape 1x4 --src-spec R --dst 4-7 --dst-shape 1x4 --dst-spec S1 --tensor 1024 --report " + cluster,
       "--report: error: " + cluster + " is the cluster this run reads; it would be overwritten"},
  };
  const std::string before_runs = slurp(runs), before_cluster = slurp(cluster), before_profile = slurp(profile);
  for (const auto& c : cases) {
    const test::CliRun r = stderr_of(c.args);
    EXPECT_EQ(r.rc, 2) << c.args;
    EXPECT_EQ(r.output, c.message + "\n") << c.args;
  }
  EXPECT_EQ(slurp(runs), before_runs);
  EXPECT_EQ(slurp(cluster), before_cluster);
  EXPECT_EQ(slurp(profile), before_profile);
  EXPECT_FALSE(fs::exists(x));
}

TEST(HostileRuns, CalibrateWritesOnlyProfilesItsReaderTakesBack) {
  // A time under a picosecond (an uncertainty of 1e-8 us where two runs agree exactly) is written as
  // none, not as a value the reader refuses; a --name over 256 characters is refused up front.
  CalibrationProfile p;
  p.name = "tiny";
  p.software = "s";
  p.fitted = "2026-12-02";
  p.devices = {"A100-SXM4-40GB"};
  p.parameters = {{"pass_host", 1e-4, 1.15742e-14}};
  p.fitted_on = {"a"};
  const Dir d;
  const std::string file = d.write("tiny.yaml", calibration_profile_text(p));
  EXPECT_NE(slurp(file).find("pass_host: {value: 100us, uncertainty: 0us}"), std::string::npos) << slurp(file);
  EXPECT_EQ(load_calibration_profile(file).parameters.at(0).uncertainty, 0.0);
  const test::CliRun r = stderr_of("calibrate --runs " + (test::source_dir() / "studies/validation/collectives.yaml").string() + " --name " +
                                   std::string(300, 'n') + " --software s --out " + (d.path / "o.yaml").string());
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.output, "--name: error: has 300 characters; a name is 1 to 256\n");
}

TEST(HostileRuns, AKeptPlanThatIsNoPlanFileIsBadInput) {
  // A plan that does not fit this run is only said (a what-if keeps its baseline's); a file that is
  // no plan at all was said the same way and the run went on with exit 0.
  const Dir d;
  const std::string text = d.write("passwd", "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n");
  const test::CliRun r = stderr_of("plan --no-upper-bound -m bert-base --keep-plan " + text);
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.output.find(text + ":1:1: error: expected a mapping of fields at the top level"), std::string::npos) << r.output;
  EXPECT_EQ(stderr_of("plan --no-upper-bound -m bert-base --keep-plan /dev/zero").rc, 2);
}

TEST(HostileRuns, ARecipeTheGpusLackIsSaidOfTheOptionThatAskedForIt) {
  // --precision is carried as an edit of the model; its error named a --set the user never typed.
  const test::CliRun r = stderr_of("simulate -c h100-mi300x -m llama2-7b --strategy dp-even --no-upper-bound --precision mxfp8");
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.output.rfind("--precision mxfp8: error: mxfp8 needs tensor cores with MX block scaling", 0), 0u) << r.output;
}

// The second audit (2026-12-04).

TEST(HostileRuns, AFileOfAnotherKindNamedInsideAnInputIsNotQuotedBack) {
  // A cluster whose network graph names a password-like file: its lines came back one per "unknown
  // key" diagnostic. Now: one line saying it is no file of the kind, its lines not quoted.
  const Dir d;
  const std::string secret = d.write("secret.yaml", "root:$6$salt$hash:20228:0:99999:7::\ndaemon:*:20228:0:99999:7::\n");
  const std::string cluster = d.write(
      "c.yaml",
      "name: g\nnode_types:\n  - {name: n, count: 2, gpu: H100-SXM5-80GB, gpus_per_node: 8,\n"
      "     intra_node: {fabric: nvswitch, bandwidth: 450GBps, latency: 1us}, nic: {count: 8, bandwidth: 400Gbps, latency: 2us}}\n"
      "network: {topology: graph, graph: secret.yaml, switch_latency: 1us}\n");
  const test::CliRun r = stderr_of("simulate --no-upper-bound -m bert-base -c " + cluster);
  EXPECT_EQ(r.rc, 2) << r.output;
  EXPECT_NE(r.output.find(secret + ":1:1: error: none of its 2 top-level keys is a field here: not a file of the kind expected"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("20228"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("$6$"), std::string::npos) << r.output;
  // A mistyped field is still quoted back, with a suggestion.
  const std::string typo = d.write("t.yaml", "name: t\nnode_types:\n  - {name: n, count: 1, gpu: H100-SXM5-80GB, gpus_per_node: 8,\n"
                                             "     intra_node: {fabric: nvswitch, bandwidth: 450GBps, latency: 1us}}\nnetwrk: {}\n");
  EXPECT_NE(stderr_of("simulate --no-upper-bound -m bert-base -c " + typo).output.find("unknown key \"netwrk\"; did you mean \"network\"?"),
            std::string::npos);
}

TEST(HostileRuns, HelpInsideACompareScenarioAndADocumentMarkerInASetAreBadInput) {
  // compare's scenario with --help wrote no report: "internal error", exit 1.
  const test::CliRun help = stderr_of("compare simulate -m bert-base --vs --help");
  EXPECT_EQ(help.rc, 2) << help.output;
  EXPECT_NE(help.output.find("--help inside a scenario runs nothing to compare"), std::string::npos) << help.output;
  // A --set value holding "---" or "..." on a line of its own kept only the text before it.
  for (const char* value : {"x\\n---\\ny", "x\\n...\\n: : bad ["}) {  // (printf: /bin/sh has no $'...')
    const test::CliRun r = stderr_of(std::string("simulate --no-upper-bound -m bert-base --set \"cluster.name=$(printf '") + value + "')\"");
    EXPECT_EQ(r.rc, 2) << value << "\n" << r.output;
    EXPECT_NE(r.output.find("a --set value is one YAML value"), std::string::npos) << r.output;
  }
}

TEST(HostileRuns, AKeptPlanWithAMistypedFieldIsBadInputBeforeAnyPlanning) {
  // It ran the whole search, then said "does not apply here (unknown key ...)" and exited 0.
  const Dir d;
  const std::string plan = d.write("p.yaml", "kind: hybrid\nmodel: bert-base\nmicro_batchs: 2\npipelines: []\n");
  const test::CliRun r = stderr_of("plan --no-upper-bound -m bert-base --keep-plan " + plan);
  EXPECT_EQ(r.rc, 2) << r.output;
  EXPECT_NE(r.output.find(plan + ":3:1: error: unknown key \"micro_batchs\"; did you mean \"micro_batch\"?"), std::string::npos) << r.output;
}

TEST(HostileRuns, AModelOfHugeHiddenAndSequencePlansInBoundedMemory) {
#if HETSIM_TEST_ASAN
  GTEST_SKIP() << "AddressSanitizer maps terabytes of shadow memory: no address-space limit can hold it";
#endif
  // hidden = seq = 2^24, within the model format's limits: the hybrid estimator priced TP
  // collectives of hundreds of TiB as pipelines of 512 KiB pieces, past 12 GB and a minute. Now
  // under 1 GB of address space it answers: no plan fits (exit 3).
  const Dir d;
  const std::string model =
      d.write("huge.yaml", "name: huge\nfamily: gpt\nlayers: 2\nhidden: 16777216\nheads: 16\nffn_hidden: 8192\nseq_len: 16777216\n"
                           "vocab: 51200\ntraining: {global_batch: 64, micro_batch: 1, dtype: fp16, optimizer: adam, recompute: none}\n");
  const test::CliRun r = test::run_shell("ulimit -v 1500000; " + test::hetsim_binary() + " -q plan -m " + model + " >/dev/null 2>&1; echo $?");
  EXPECT_EQ(r.output, "3\n");
}

TEST(HostileRuns, ReliabilityThatLeavesNoTimeToTrainIsRefusedOrSaid) {
  // A restart of 1000 years gave a goodput of 0, a time to train written as null, and "1 feasible"
  // beside "no planned mix was feasible"; a checkpoint write of 1 B/s a time to train of 1e27 days.
  const std::string base =
      "name: t\nmodel: bert-base\ntrain_tokens: 1G\nbudget: {rent_per_hour: 100USD/h}\noffers:\n  - name: a100\n"
      "    node: {gpu: A100-SXM4-40GB, gpus_per_node: 8, intra_node: {fabric: nvswitch, bandwidth: 300GBps, latency: 1us},\n"
      "           nic: {count: 8, bandwidth: 200Gbps, latency: 2us}}\n    rent: 30USD/h\n    power: 6.5kW\n"
      "    source: \"test figure, 2026-12\"\n    max_count: 2\n";
  const Dir d;
  for (const auto& [rel, expect] : {std::pair{"reliability: {restart: 1000y}\n", "reliability.restart: "},
                                    std::pair{"reliability: {checkpoint_write: 1Bps}\n", "reliability.checkpoint_write: \"1Bps\" is too small"}}) {
    const std::string file = d.write("s.yaml", base + rel);
    const test::CliRun r = stderr_of("size " + file + " --dry-run");
    EXPECT_EQ(r.rc, 2) << rel << r.output;
    EXPECT_NE(r.output.find(expect), std::string::npos) << r.output;
  }
}

TEST(HostileRuns, ACalibrationProfileNamedInARunFileIsFoundBesideItAndItsErrorsLocated) {
  const Dir d;
  const std::string profile = d.write("cal.yaml", "name: x\n");
  const std::string runs = d.write("runs.yaml",
                                   "- name: co\n  source: \"x 2026\"\n  calibration: cal.yaml\n  cluster: a100-v100-2x2\n"
                                   "  collective: {op: allreduce, size: 1GiB}\n  measured: {busbw_Bps: 1e11}\n");
  const test::CliRun r = stderr_of("validate --runs " + runs);
  EXPECT_EQ(r.rc, 2) << r.output;
  // The profile beside the run file was read (not "no file and no shipped profile"), and its own
  // file, line and field are named.
  EXPECT_NE(r.output.find(runs + ":3:16: error: [0].calibration: in " + profile + ":1:1, "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("missing required field"), std::string::npos) << r.output;
}

TEST(HostileRuns, ANameIsCountedInCharactersNotBytes) {
  const Dir d;
  std::string accented;
  for (int i = 0; i < 200; ++i) accented += "\xc3\xa9";  // 200 x e-acute: 400 bytes, 200 characters
  std::string name300;
  for (int i = 0; i < 300; ++i) name300 += "\xc3\xa9";
  const std::string ok = d.write("ok.yaml", "name: " + accented + "\nnode_types:\n  - {name: n, count: 1, gpu: H100-SXM5-80GB, gpus_per_node: 8,\n"
                                                           "     intra_node: {fabric: nvswitch, bandwidth: 450GBps, latency: 1us}, nic: {count: 1, bandwidth: 100Gbps, latency: 2us}}\n"
                                                           "network: {topology: single-switch, switch_latency: 1us}\n");
  EXPECT_EQ(stderr_of("simulate --no-upper-bound -m bert-base --strategy dp-even -c " + ok).rc, 0);
  const std::string bad = d.write("bad.yaml", "name: " + name300 + "\nnode_types:\n  - {name: n, count: 1, gpu: H100-SXM5-80GB, gpus_per_node: 8,\n"
                                                             "     intra_node: {fabric: nvswitch, bandwidth: 450GBps, latency: 1us}}\n");
  const test::CliRun r = stderr_of("simulate --no-upper-bound -m bert-base --strategy dp-even -c " + bad);
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.output.find("name: has 300 characters; a name is 1 to 256 printable characters"), std::string::npos) << r.output;
}

TEST(HostileRuns, RefusalsLeaveNoHalfWrittenOutputAndEchoWhatWasTyped) {
  // size --emit onto a folder holding the sizing file itself as front-1.plan.yaml: refused, but
  // only after front-1.cluster.yaml was written.
  const Dir d;
  const std::string sizing = d.write(
      "front-1.plan.yaml",
      "name: t\nmodel: bert-base\ntrain_tokens: 1G\nbudget: {rent_per_hour: 100USD/h}\noffers:\n  - name: a100\n"
      "    node: {gpu: A100-SXM4-40GB, gpus_per_node: 8, intra_node: {fabric: nvswitch, bandwidth: 300GBps, latency: 1us},\n"
      "           nic: {count: 8, bandwidth: 200Gbps, latency: 2us}}\n    rent: 30USD/h\n    power: 6.5kW\n"
      "    source: \"test figure, 2026-12\"\n    max_count: 1\n");
  const test::CliRun r = stderr_of("size " + sizing + " --emit " + d.path.string() + " --db " + (d.path / "s.db").string());
  EXPECT_EQ(r.rc, 2) << r.output;
  EXPECT_NE(r.output.find("a file this run read as an input; it would be overwritten"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(d.path / "front-1.cluster.yaml"));
  // A device is not "no such results database"; --set cluster=foo was echoed as "cluster.=foo".
  EXPECT_NE(stderr_of("report /dev/null").output.find("/dev/null: error: is not a results database: not a regular file"), std::string::npos);
  EXPECT_NE(stderr_of("simulate --no-upper-bound --set cluster=foo").output.find("--set cluster=foo: error: "), std::string::npos);
}

}  // namespace
}  // namespace hetsim
