// File: planner/hybrid/tp_collectives.cpp
#include "planner/hybrid/tp_collectives.hpp"

namespace hetsim {

int add_tp_collectives(Program& p, const std::vector<int>& group, const TpBytes& bytes, bool sequence_parallel, int dep,
                       const std::string& label) {
  int last = dep;
  auto add = [&](CollectiveOp op, double size, const char* name) {
    if (size <= 0) return;
    CollectiveTask c = collective(op, group, size);
    c.stream = CommStream::kTensor;
    std::vector<int> deps;
    if (last >= 0) deps.push_back(last);
    last = p.add({label + name, c, std::move(deps)});
  };
  const double rs = bytes.reduce_scatter + (sequence_parallel ? bytes.all_reduce : 0);
  const double ag = bytes.all_gather + (sequence_parallel ? bytes.all_reduce : 0);
  add(CollectiveOp::kReduceScatter, rs, ".tp_reducescatter");
  add(CollectiveOp::kAllGather, ag, ".tp_allgather");
  if (!sequence_parallel) add(CollectiveOp::kAllReduce, bytes.all_reduce, ".tp_allreduce");
  add(CollectiveOp::kAllToAll, bytes.all_to_all, ".tp_alltoall");
  return last;
}

}  // namespace hetsim
