// File: planner/hybrid/tp_collectives.cpp
#include "planner/hybrid/tp_collectives.hpp"

#include <utility>

namespace hetsim {

int add_tp_collectives(Program& p, const std::vector<int>& group, const TpBytes& bytes, bool sequence_parallel,
                       std::vector<int> deps, const std::string& label, CommStream stream) {
  int last = -1;
  auto add = [&](CollectiveOp op, double size, const char* name) {
    if (size <= 0) return;
    CollectiveTask c = collective(op, group, size);
    c.stream = stream;
    last = p.add({label + name, c, std::move(deps)});
    deps = {last};
  };
  const double rs = bytes.reduce_scatter + (sequence_parallel ? bytes.all_reduce : 0);
  const double ag = bytes.all_gather + (sequence_parallel ? bytes.all_reduce : 0);
  add(CollectiveOp::kReduceScatter, rs, ".tp_reducescatter");
  add(CollectiveOp::kAllGather, ag, ".tp_allgather");
  if (!sequence_parallel) add(CollectiveOp::kAllReduce, bytes.all_reduce, ".tp_allreduce");
  add(CollectiveOp::kAllToAll, bytes.all_to_all, ".tp_alltoall");
  return last;
}

int add_tp_collectives(Program& p, const std::vector<int>& group, const TpBytes& bytes, bool sequence_parallel, int dep,
                       const std::string& label, CommStream stream) {
  std::vector<int> deps;
  if (dep >= 0) deps.push_back(dep);
  const int last = add_tp_collectives(p, group, bytes, sequence_parallel, std::move(deps), label, stream);
  return last >= 0 ? last : dep;
}

}  // namespace hetsim
