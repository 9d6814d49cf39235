// File: sim/program.cpp
#include "sim/program.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>

#include "base/input_error.hpp"
#include "base/text.hpp"

namespace hetsim {

std::string_view comm_stream_name(CommStream s) {
  switch (s) {
    case CommStream::kData: return "comm";
    case CommStream::kTensor: return "tp";
    case CommStream::kPipeline: return "p2p";
    case CommStream::kPipelineBack: return "p2p.back";
    case CommStream::kExpert: return "ep";
    case CommStream::kExpertRail: return "ep.rail";
  }
  return "?";
}

std::string_view collective_name(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::kAllReduce: return "allreduce";
    case CollectiveOp::kAllGather: return "allgather";
    case CollectiveOp::kReduceScatter: return "reducescatter";
    case CollectiveOp::kBroadcast: return "broadcast";
    case CollectiveOp::kReduce: return "reduce";
    case CollectiveOp::kAllToAll: return "alltoall";
  }
  return "?";
}

std::string_view algorithm_name(Algorithm a) {
  switch (a) {
    case Algorithm::kAuto: return "auto";
    case Algorithm::kRing: return "ring";
    case Algorithm::kTree: return "tree";
    case Algorithm::kHierarchical: return "hierarchical";
    case Algorithm::kChain: return "chain";
    case Algorithm::kPairwise: return "pairwise";
    case Algorithm::kGrouped: return "grouped";
    case Algorithm::kNvls: return "nvls";
    case Algorithm::kMesh: return "mesh";
    case Algorithm::kPxn: return "pxn";
  }
  return "?";
}


namespace {

constexpr std::array kCollectiveOps{CollectiveOp::kAllReduce, CollectiveOp::kAllGather, CollectiveOp::kReduceScatter,
                                    CollectiveOp::kBroadcast, CollectiveOp::kReduce,    CollectiveOp::kAllToAll};
constexpr std::array kAlgorithms{Algorithm::kAuto,    Algorithm::kRing,     Algorithm::kTree,
                                 Algorithm::kHierarchical, Algorithm::kChain, Algorithm::kPairwise,
                                 Algorithm::kGrouped, Algorithm::kNvls,     Algorithm::kMesh,
                                 Algorithm::kPxn};

template <class E, size_t N>
std::vector<std::string> names_of(const std::array<E, N>& all, std::string_view (*name)(E)) {
  std::vector<std::string> out;
  for (E e : all) out.emplace_back(name(e));
  return out;
}

template <class E, size_t N>
std::optional<E> from_name(const std::array<E, N>& all, std::string_view (*name)(E), std::string_view n) {
  for (E e : all) {
    if (name(e) == n) return e;
  }
  return std::nullopt;
}

}  // namespace

const std::vector<std::string>& collective_names() {
  static const std::vector<std::string> names = names_of(kCollectiveOps, collective_name);
  return names;
}

const std::vector<std::string>& algorithm_names() {
  static const std::vector<std::string> names = names_of(kAlgorithms, algorithm_name);
  return names;
}

std::optional<CollectiveOp> collective_from_name(std::string_view n) { return from_name(kCollectiveOps, collective_name, n); }

std::optional<Algorithm> algorithm_from_name(std::string_view n) { return from_name(kAlgorithms, algorithm_name, n); }

std::vector<std::pair<int, int>> SendTask::transfers() const {
  std::vector<std::pair<int, int>> all{{src, dst}};
  all.insert(all.end(), mirrors.begin(), mirrors.end());
  return all;
}

std::vector<std::pair<int, int>> SendTask::copy_transfers(size_t k) const {
  const std::vector<std::pair<int, int>> all = transfers();
  const size_t n = all.size() / static_cast<size_t>(copies);
  return {all.begin() + static_cast<long>(k * n), all.begin() + static_cast<long>((k + 1) * n)};
}

CollectiveTask CollectiveTask::part(size_t k) const {
  CollectiveTask c = *this;
  c.mirror_groups.clear();
  if (k == 0) return c;
  c.group = mirror_groups.at(k - 1);
  if (const auto at = std::find(group.begin(), group.end(), root); at != group.end() && c.group.size() == group.size()) {
    c.root = c.group[static_cast<size_t>(at - group.begin())];
  }
  return c;
}

std::string validate(const Program& p) {
  const int n = static_cast<int>(p.devices.size());
  auto bad_device = [n](int d) { return d < 0 || d >= n; };
  if (p.repeated_step) {
    const RepeatedStep& rs = *p.repeated_step;
    if (rs.first < 0 || rs.size < 0 || rs.more < 0 ||
        static_cast<size_t>(rs.first) + 2 * static_cast<size_t>(rs.size) > p.tasks.size()) {
      return "repeated step out of range";
    }
    for (size_t i = 0; i < static_cast<size_t>(rs.size); ++i) {
      const Task& one = p.tasks[static_cast<size_t>(rs.first) + i];
      const Task& two = p.tasks[static_cast<size_t>(rs.first + rs.size) + i];
      if (one.body.index() != two.body.index() || one.deps.size() != two.deps.size()) {
        return "repeated step: task " + std::to_string(rs.first + rs.size) + "+" + std::to_string(i) + " (" + two.label +
               ") is not its twin's kind";
      }
    }
  }
  for (size_t i = 0; i < p.tasks.size(); ++i) {
    const Task& t = p.tasks[i];
    const std::string where = "task " + std::to_string(i) + " (" + t.label + "): ";
    for (int d : t.deps) {
      if (d < 0 || d >= static_cast<int>(i)) return where + "dependency " + std::to_string(d) + " is not an earlier task";
    }
    if (const auto* c = std::get_if<ComputeTask>(&t.body)) {
      if (bad_device(c->device)) return where + "device out of range";
      for (int m : c->mirrors) {
        if (bad_device(m) || m == c->device) return where + "bad mirror device";
      }
      if (!(c->duration_s >= 0)) return where + "negative duration";
      if (c->copies < 1 || (1 + c->mirrors.size()) % static_cast<size_t>(c->copies) != 0) return where + "mirrors not in equal copies";
    } else if (const auto* g = std::get_if<CollectiveTask>(&t.body)) {
      if (g->group.empty()) return where + "empty group";
      std::vector<int> sorted;
      g->for_each_member([&](int d) { sorted.push_back(d); });
      for (const std::vector<int>& m : g->mirror_groups) {
        if (m.size() != g->group.size()) return where + "a mirror group's size differs from the group's";
      }
      std::sort(sorted.begin(), sorted.end());
      if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) return where + "device repeated in group";
      if (bad_device(sorted.front()) || bad_device(sorted.back())) return where + "device out of range";
      if (!(g->size_bytes >= 0)) return where + "negative size";
      if ((g->op == CollectiveOp::kBroadcast || g->op == CollectiveOp::kReduce) &&
          std::find(g->group.begin(), g->group.end(), g->root) == g->group.end()) {
        return where + "root is not in the group";
      }
      if (!g->shard_bytes.empty() && g->shard_bytes.size() != g->group.size()) return where + "one shard size per member";
    } else if (const auto* s = std::get_if<SendTask>(&t.body)) {
      for (const auto& [src, dst] : s->transfers()) {
        if (bad_device(src) || bad_device(dst) || src == dst) return where + "bad endpoints";
      }
      if (!(s->size_bytes >= 0)) return where + "negative size";
      if (s->copies < 1 || (1 + s->mirrors.size()) % static_cast<size_t>(s->copies) != 0) return where + "mirrors not in equal copies";
    }
  }
  return {};
}

size_t Program::max_program_tasks() {
  static const size_t limit = [] {
    constexpr double kBytesPerTask = 500;
    const double memory = static_cast<double>(::sysconf(_SC_PHYS_PAGES)) * static_cast<double>(::sysconf(_SC_PAGE_SIZE));
    return static_cast<size_t>(std::max(1e6, 0.25 * memory / kBytesPerTask));
  }();
  return limit;
}

void Program::check_program_size(double tasks) {
  const size_t most = max_program_tasks();
  if (tasks <= static_cast<double>(most)) return;
  // From add(): the builder did not know its size, only that it passed the limit.
  const std::string need = tasks == static_cast<double>(most + 1) ? "more than " + std::to_string(most)
                                                                   : format_double("%.0f", tasks) + ", more than the " + std::to_string(most);
  throw InputError("training.global_batch", "",
                   "one iteration of this run needs " + need +
                       " simulated tasks this machine can hold (one per layer, micro-batch step and GPU, or group of GPUs in lockstep; about 500 bytes "
                       "each, twice, in a quarter of its memory): lower the global batch, raise the micro-batch or use "
                       "fewer GPUs (data-parallel and SPMD plans simulate identical steps once or twice, pipeline plans two "
                       "periods of their steady state where it repeats in time, unless --every-step)")
      .set_machine_limit();
}

}  // namespace hetsim
