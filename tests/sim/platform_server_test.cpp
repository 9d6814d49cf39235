// File: tests/sim/platform_server_test.cpp
// Simulations share their cluster's platform, built once per process (platform_server.hpp), and
// give the results a freshly built platform gives.
#include "sim/platform_server.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <stdexcept>

#include "sim/executor.hpp"
#include "test_support.hpp"

namespace hetsim {
namespace {

// A program that computes, all-reduces across nodes and sends: something of every part.
Program mixed_program(const Cluster& c, double bytes) {
  Program p;
  p.devices.resize(c.gpu_count());
  const int a = p.add({"a", ComputeTask{0, 1e-3, 0, 0}, {}});
  const int ar = p.add({"ar", collective(CollectiveOp::kAllReduce, {0, 1, 8, 9, 16, 17}, bytes), {a}});
  p.add({"send", SendTask{1, 24, bytes / 4}, {ar}});
  return p;
}

std::vector<double> times(const SimResult& r) {
  std::vector<double> t;
  for (const TaskTiming& x : r.tasks) t.insert(t.end(), {x.start_s, x.end_s});
  return t;
}

std::string echo_job(const Cluster& c, const Platform& platform, std::string_view request) {
  if (request == "throw") throw std::runtime_error("the job refused");
  if (request == "abort") std::abort();
  if (request == "kill server") {
    ::kill(::getppid(), SIGKILL);
    ::pause();
  }
  return c.name + ":" + std::to_string(platform.gpus.size()) + ":" + std::string(request);
}

TEST(PlatformServer, OneServerPerClusterAndItsRunsEqualFreshOnes) {
  stop_platform_servers();
  const Cluster c = test::shipped_cluster("a100-8x8");
  const int before = platform_servers_started();
  const SimResult first = simulate(mixed_program(c, 1e8), c);
  const SimResult other = simulate(mixed_program(c, 3e9), c);
  const SimResult again = simulate(mixed_program(c, 1e8), c);
  EXPECT_EQ(platform_servers_started(), before + 1);
  EXPECT_EQ(times(again), times(first));  // bit for bit: the run before left nothing behind
  EXPECT_NE(times(other), times(first));

  stop_platform_servers();
  const SimResult restarted = simulate(mixed_program(c, 1e8), c);
  EXPECT_EQ(platform_servers_started(), before + 2);
  EXPECT_EQ(times(restarted), times(first));
  EXPECT_EQ(restarted.activities, first.activities);
}

TEST(PlatformServer, LargeProgramsRunOnAPlatformOfTheirOwnWithTheSameTimes) {
  for (const char* name : {"a100-8x8", "a100-mi250x"}) {  // the second stages flows through host memory
    const Cluster c = test::shipped_cluster(name);
    Program p = mixed_program(c, 2e8);
    const int n = c.gpu_count();
    for (int d = 0; d < n; d += 2) {
      if (const int to = (d + 1 + d % 16) % n; to != d) p.add({"s", SendTask{d, to, 1e7}, {}});
    }
    p.add({"a2a", collective(CollectiveOp::kAllToAll, {0, 3, 9, 12, 24, 30}, 6e7), {2}});
    stop_platform_servers();
    const int before = platform_servers_started();
    SimOptions own;
    own.served_tasks = 1;
    const SimResult fresh = simulate(p, c, own);
    EXPECT_EQ(platform_servers_started(), before);
    const SimResult served = simulate(p, c);
    EXPECT_EQ(platform_servers_started(), before + 1);
    EXPECT_EQ(times(served), times(fresh)) << name;
    EXPECT_EQ(served.activities, fresh.activities) << name;
  }
}

TEST(PlatformServer, AFewServersAreKeptTheLeastRecentlyUsedStoppingFirst) {
  stop_platform_servers();
  const int before = platform_servers_started();
  std::vector<Cluster> clusters(5, test::shipped_cluster("a100-8x8"));
  for (size_t i = 0; i < clusters.size(); ++i) clusters[i].name.append(std::to_string(i));
  for (const Cluster& c : clusters) EXPECT_EQ(run_on_platform(c, echo_job, "x"), std::string(c.name).append(":64:x"));
  EXPECT_EQ(platform_servers_started(), before + 5);
  for (size_t i = 1; i < clusters.size(); ++i) (void)run_on_platform(clusters[i], echo_job, "x");
  EXPECT_EQ(platform_servers_started(), before + 5);  // the last four are kept
  (void)run_on_platform(clusters[0], echo_job, "x");
  EXPECT_EQ(platform_servers_started(), before + 6);
  clusters[2].network.switch_latency_s *= 2;  // any field differs: another platform
  (void)run_on_platform(clusters[2], echo_job, "x");
  EXPECT_EQ(platform_servers_started(), before + 7);

  // The GPUs of the platforms kept are bounded too: 64 + 32 fit in 130, a third cluster of 64
  // stops the least recently used; a cluster larger than the bound is kept alone.
  stop_platform_servers();
  set_platform_server_limits(0, 130);
  const Cluster small = test::shipped_cluster("a100-v100-2x2");
  const int start = platform_servers_started();
  (void)run_on_platform(clusters[0], echo_job, "x");
  (void)run_on_platform(small, echo_job, "x");
  (void)run_on_platform(clusters[0], echo_job, "x");
  EXPECT_EQ(platform_servers_started(), start + 2);
  (void)run_on_platform(clusters[1], echo_job, "x");  // 64 + 32 + 64: the small one goes
  (void)run_on_platform(clusters[0], echo_job, "x");
  EXPECT_EQ(platform_servers_started(), start + 3);
  (void)run_on_platform(small, echo_job, "x");
  EXPECT_EQ(platform_servers_started(), start + 4);
  set_platform_server_limits(0, 10);
  (void)run_on_platform(clusters[1], echo_job, "x");  // larger than the bound: alone
  (void)run_on_platform(clusters[1], echo_job, "x");
  EXPECT_EQ(platform_servers_started(), start + 5);
  set_platform_server_limits(0, 0);
  stop_platform_servers();
}

TEST(PlatformServer, AFailedOrDeadRunIsReportedAndTheServerGoesOn) {
  stop_platform_servers();
  const Cluster c = test::shipped_cluster("a100-v100-2x2");
  const int before = platform_servers_started();
  EXPECT_EQ(run_on_platform(c, echo_job, "x"), c.name + ":32:x");
  try {
    (void)run_on_platform(c, echo_job, "throw");
    ADD_FAILURE() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "simulation failed: the job refused");
  }
  try {
    (void)run_on_platform(c, echo_job, "abort");
    ADD_FAILURE() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "simulation failed: simulation process died (signal 6)");
  }
  EXPECT_EQ(run_on_platform(c, echo_job, "y"), c.name + ":32:y");
  EXPECT_EQ(platform_servers_started(), before + 1);

  try {
    (void)run_on_platform(c, echo_job, "kill server");
    ADD_FAILURE() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "simulation server died (signal 9)");
  }
  EXPECT_EQ(run_on_platform(c, echo_job, "z"), c.name + ":32:z");  // a new server
  EXPECT_EQ(platform_servers_started(), before + 2);
}

TEST(PlatformServer, AForkOfTheProcessStartsItsOwnServer) {
  const Cluster c = test::shipped_cluster("a100-8x8");
  const double mine = simulate(mixed_program(c, 1e8), c).iteration_time_s;
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::close(fds[0]);
    double out[2] = {simulate(mixed_program(c, 1e8), c).iteration_time_s, static_cast<double>(platform_servers_started())};
    const bool ok = ::write(fds[1], out, sizeof out) == static_cast<ssize_t>(sizeof out);
    ::_exit(ok ? 0 : 1);
  }
  ::close(fds[1]);
  double got[2] = {0, 0};
  EXPECT_EQ(::read(fds[0], got, sizeof got), static_cast<ssize_t>(sizeof got));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(got[0], mine);
  EXPECT_EQ(got[1], 1);  // its own, not ours
  EXPECT_EQ(simulate(mixed_program(c, 1e8), c).iteration_time_s, mine);  // ours still answers
}

}  // namespace
}  // namespace hetsim
