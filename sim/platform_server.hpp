// File: sim/platform_server.hpp
// Runs simulations on a cluster's SimGrid platform built once per process, not once per run.
// SimGrid allows one engine per process and seals its platform at its first run, so a server
// process (forked from this one, one per cluster) creates the engine and builds the platform but
// never runs it, and answers each request in a fork of itself: the fork inherits the unsealed
// engine copy-on-write, runs, and exits. Every run starts from the same state (a clean clock,
// bit-identical results) and none builds the platform again.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "sim/platform.hpp"
#include "topologies/cluster.hpp"

namespace hetsim {

// Work done in a fork of a server: the cluster and platform it built, and one request's bytes.
// Returns the bytes sent back. `cluster` lives in the server (a copy taken when it started).
using PlatformJob = std::string (*)(const Cluster& cluster, const Platform& platform, std::string_view request);

// Returns job(cluster, platform, request) run in a fork of the server for (`cluster`, `job`),
// which starts on first use; a process keeps a few servers (set_platform_server_limits), the
// least recently used stopping first. A job's exception comes back as std::runtime_error carrying its message ("simulation
// failed: ..."), as does the death of the job's process or of the server. Servers belong to the
// process that started them: a fork of it starts its own.
// Threads may call it at once: each request takes an idle server of its cluster, and one more
// starts when all are busy (one started by a thread other than the main one serves that request
// only: it would die with its thread).
[[nodiscard]] std::string run_on_platform(const Cluster& cluster, PlatformJob job, std::string_view request);
// Called from the main thread before `count` threads run `job` on `cluster` at once: that many
// servers, started now, so that none of them is started by (and dies with) a passing thread.
void prepare_platform_servers(const Cluster& cluster, PlatformJob job, size_t count);

// Returns work(platform) run in a fork of this process that builds `cluster`'s platform for it
// alone (no server: for work that outweighs building the platform, where sending its input to a
// server would cost more than it saves). Errors as run_on_platform.
[[nodiscard]] std::string run_on_fresh_platform(const Cluster& cluster, const std::function<std::string(const Platform&)>& work);

// Servers this process has started so far (each built one platform).
[[nodiscard]] int platform_servers_started();

// Stops this process's servers; the next run starts a new one.
void stop_platform_servers();

// How many servers a process keeps at once and how many GPUs their platforms hold together (a
// server for a larger cluster is kept alone); 0: the defaults, 4 and 131 072. Tests lower them.
void set_platform_server_limits(size_t servers, size_t gpus);

}  // namespace hetsim
