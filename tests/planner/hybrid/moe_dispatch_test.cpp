// File: tests/planner/hybrid/moe_dispatch_test.cpp
// Megatron-Core's token dispatchers (plan field moe_dispatcher) against closed forms: alltoall
// sends every (token, expert) copy; allgather spreads every token to every GPU of the EP group;
// flex (DeepEP / HybridEP) sends each token once per GPU holding one of its experts, and across
// nodes once per node over the rail of the same local rank, forwarded inside the node over NVLink.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "planner/hybrid/hybrid_plan_file.hpp"
#include "planner/hybrid/hybrid_planner.hpp"
#include "planner/hybrid/megatron_args.hpp"
#include "planner/hybrid/moe_dispatch.hpp"
#include "planner/hybrid/stage_work.hpp"
#include "one_stage_plan.hpp"
#include "test_support.hpp"

namespace hetsim {
namespace {

using test::h100_nodes;

TEST(MoeDispatch, RoutingMissesAreTheHypergeometricZero) {
  EXPECT_DOUBLE_EQ(routing_misses(4, 2, 2), 1.0 / 6);         // C(2,2) / C(4,2)
  EXPECT_DOUBLE_EQ(routing_misses(16, 8, 4), 70.0 / 1820);    // C(8,4) / C(16,4)
  EXPECT_DOUBLE_EQ(routing_misses(8, 7, 2), 0);               // one expert left, two drawn
  EXPECT_DOUBLE_EQ(routing_misses(8, 0, 2), 1);
}

TEST(MoeDispatch, EachDispatcherSendsWhatItsClosedFormSays) {
  MoeSpec moe;
  moe.experts = 16;
  moe.top_k = 4;
  const double T = 1000, b = 2, copies = T * 4;
  // alltoall: the copies' buffer; (ep - 1)/ep of it leaves the GPU.
  EXPECT_DOUBLE_EQ(dispatch_traffic(MoeDispatcher::kAllToAll, moe, T, copies, b, {16, 2}).all_to_all, copies * b);
  // allgather: every GPU ends with all ep GPUs' tokens.
  const DispatchTraffic ag = dispatch_traffic(MoeDispatcher::kAllGather, moe, T, copies, b, {16, 2});
  EXPECT_DOUBLE_EQ(ag.all_gather, T * b * 16);
  EXPECT_EQ(ag.all_to_all, 0);
  // flex over 2 nodes of 8: across nodes each token goes to the other node unless none of its 4
  // experts is among that node's 8 (buffer: 2 x what is sent); inside each node from the GPU it
  // landed on to every other GPU holding one of its experts (each GPU holds 1).
  const DispatchTraffic flex = dispatch_traffic(MoeDispatcher::kFlex, moe, T, copies, b, {16, 2});
  const double remote = T * (1 - 70.0 / 1820);
  EXPECT_DOUBLE_EQ(flex.rail_all_to_all * (2 - 1) / 2, remote * b);
  const double forwarded = 2 * T * 7 * (1 - routing_misses(16, 1, 4));  // 2 nodes x 7 other GPUs
  EXPECT_NEAR(flex.all_to_all * (8 - 1) / 8, forwarded * b, 1e-9 * forwarded);
  // One node and one expert per GPU: the distinct GPUs are the experts, flex sends what alltoall does.
  const DispatchTraffic one = dispatch_traffic(MoeDispatcher::kFlex, moe, T, copies, b, {16, 1});
  EXPECT_EQ(one.rail_all_to_all, 0);
  EXPECT_NEAR(one.all_to_all * 15 / 16, copies * b * 15 / 16, 1e-9 * copies * b);
  // The busiest GPU moves the imbalance times the mean, except for allgather's broadcast.
  moe.router_imbalance = 1.5;
  EXPECT_DOUBLE_EQ(dispatch_traffic(MoeDispatcher::kFlex, moe, T, copies, b, {16, 2}).rail_all_to_all, 1.5 * flex.rail_all_to_all);
  EXPECT_DOUBLE_EQ(dispatch_traffic(MoeDispatcher::kAllGather, moe, T, copies, b, {16, 2}).all_gather, ag.all_gather);
  EXPECT_EQ(ep_nodes(16, 1, 8), 2);
  EXPECT_EQ(ep_nodes(8, 2, 8), 2);
  EXPECT_EQ(ep_nodes(4, 1, 8), 1);
}

TEST(MoeDispatch, AllGathersPermutationReadsEveryRanksTokens) {
  // Under allgather a GPU picks its experts' rows out of all ep ranks' gathered tokens and writes
  // its outputs back into that whole buffer: its permutations move (ep - 1) x T more hidden
  // vectors each way than under alltoall (memory-bound copies), the rest of the layer is the same.
  ModelSpec m = load_model(test::shipped("workloads", "mixtral-8x7b"));
  m.layers = 1;
  m.seq_len = 4096;
  const Device h100 = load_device(test::shipped("kernels_profile/devices", "H100-SXM5-80GB"));
  const auto layer_fwd = [&](MoeDispatcher d, int ep) {
    StageWorkKey key{1, 1, false, RecomputeMode::kNone, StageProgram::kMegatron, true, 1, CpComm::kRing, ep, 1, false, d};
    const std::vector<BlockWork> work = stage_block_work(m, h100, DType::kBf16, CostModel{}, key);
    double secs = 0;
    for (const WorkPart& part : work[1].parts) secs += part.fwd_s;
    return secs;
  };
  const double extra8 = layer_fwd(MoeDispatcher::kAllGather, 8) - layer_fwd(MoeDispatcher::kAllToAll, 8);
  const double extra2 = layer_fwd(MoeDispatcher::kAllGather, 2) - layer_fwd(MoeDispatcher::kAllToAll, 2);
  EXPECT_GT(extra2, 0);
  EXPECT_GT(extra8, 3 * extra2);  // 7 other ranks' tokens against 1 (copies of a few hundred MB: near linear)
  EXPECT_LT(extra8, 9 * extra2);
}

struct Collectives {
  std::vector<const CollectiveTask*> a2a, all_gather, reduce_scatter;
};

// Mixtral 8x7B-like (2 layers, 16 experts) on two DGX H100: one stage, ep 16 over both nodes.
Evaluation mixtral_ep16(MoeDispatcher d, Collectives* seen = nullptr, double* token_bytes = nullptr) {
  ModelSpec m = load_model(test::shipped("workloads", "mixtral-8x7b"));
  m.layers = 2;
  m.seq_len = 4096;
  m.moe->experts = 16;
  m.training.global_batch = 32;
  const Cluster c = h100_nodes(2);
  HybridPlan p = test::one_stage_plan(16, 2, 2, 16, 1, 16);
  p.moe_dispatcher = d;
  EXPECT_EQ(check_hybrid_plan(p, m, c).size(), 0u);
  HybridPlanner planner(m, c, CostModel{}, SimOptions{});
  Evaluation ev = planner.evaluate(p, "ep16");
  EXPECT_TRUE(ev.report.feasible) << ev.report.infeasible_reason;
  if (token_bytes != nullptr) *token_bytes = 4096.0 * static_cast<double>(m.hidden) * 2;  // a GPU's tokens, bf16
  for (const Task& t : ev.program.tasks) {
    const auto* col = std::get_if<CollectiveTask>(&t.body);
    const bool expert = col != nullptr && (col->stream == CommStream::kExpert || col->stream == CommStream::kExpertRail);
    if (!expert || seen == nullptr) continue;
    if (col->op == CollectiveOp::kAllToAll) seen->a2a.push_back(col);
    if (col->op == CollectiveOp::kAllGather) seen->all_gather.push_back(col);
    if (col->op == CollectiveOp::kReduceScatter) seen->reduce_scatter.push_back(col);
  }
  return ev;
}

TEST(MoeDispatch, FlexRunsARailAllToAllBesideAnInNodeOneAndBeatsAllToAllAcrossNodes) {
  Collectives alltoall, flex, allgather;
  double tok = 0;
  const Evaluation a = mixtral_ep16(MoeDispatcher::kAllToAll, &alltoall, &tok);
  const Evaluation f = mixtral_ep16(MoeDispatcher::kFlex, &flex);
  const Evaluation g = mixtral_ep16(MoeDispatcher::kAllGather, &allgather);
  // alltoall: one group of 16 per collective.
  ASSERT_FALSE(alltoall.a2a.empty());
  for (const CollectiveTask* t : alltoall.a2a) EXPECT_EQ(t->group.size(), 16u);
  // flex: rails (GPU k of node 0 with GPU k of node 1) and the two nodes' groups of 8, no group of 16.
  bool rail = false, node = false;
  for (const CollectiveTask* t : flex.a2a) {
    ASSERT_TRUE(t->group.size() == 2 || t->group.size() == 8) << t->group.size();
    if (t->group.size() == 2) {
      rail = true;
      EXPECT_EQ(t->group[1] - t->group[0], 8);
    } else {
      node = true;
      EXPECT_EQ(t->group.back() / 8, t->group.front() / 8);  // one node
    }
  }
  EXPECT_TRUE(rail && node);
  // The first dispatch's two parts run side by side: the rails' on a stream of their own (the NICs)
  // beside the node's (NVLink), not one after the other on one stream.
  int first_rail = -1, first_node = -1;
  for (size_t i = 0; i < f.program.tasks.size(); ++i) {
    const auto* col = std::get_if<CollectiveTask>(&f.program.tasks[i].body);
    if (col == nullptr || col->op != CollectiveOp::kAllToAll) continue;
    int& first = col->group.size() == 2 ? first_rail : first_node;
    if (first >= 0) continue;
    first = static_cast<int>(i);
    EXPECT_EQ(col->stream, col->group.size() == 2 ? CommStream::kExpertRail : CommStream::kExpert);
  }
  ASSERT_TRUE(first_rail >= 0 && first_node >= 0);
  const TaskTiming& tr = f.result.tasks[static_cast<size_t>(first_rail)];
  const TaskTiming& tn = f.result.tasks[static_cast<size_t>(first_node)];
  EXPECT_DOUBLE_EQ(tr.start_s, tn.start_s);
  EXPECT_LT(std::max(tr.start_s, tn.start_s), std::min(tr.end_s, tn.end_s));
  // Across the NICs: alltoall sends 2 x 8/16 of a token per token (top-2, half the experts remote;
  // its buffer holds the 2 copies), flex 1 - misses (its rail buffer 2 x that): a token stays home
  // only if both its experts are local. The first expert collective of each is the same pass's.
  const CollectiveTask* a2a_rail = nullptr;
  for (const CollectiveTask* t : flex.a2a) a2a_rail = a2a_rail == nullptr && t->group.size() == 2 ? t : a2a_rail;
  const double remote_share = 1 - routing_misses(16, 8, 2);
  EXPECT_NEAR(a2a_rail->size_bytes / 2 / (alltoall.a2a.front()->size_bytes / 2), remote_share, 1e-9);
  const double dispatches = alltoall.a2a.front()->size_bytes / (2 * tok);  // layers' dispatches (and combines) in one pass
  EXPECT_GE(dispatches, 1);
  EXPECT_DOUBLE_EQ(dispatches, std::round(dispatches));
  EXPECT_LT(remote_share, 2 * 8.0 / 16);
  EXPECT_LT(f.report.iteration_time_s, a.report.iteration_time_s);
  // allgather: all-gathers of every GPU's tokens and reduce-scatters back, over the group of 16.
  ASSERT_FALSE(allgather.all_gather.empty());
  EXPECT_EQ(allgather.all_gather.front()->group.size(), 16u);
  // The same pass: alltoall's buffer holds each layer's dispatch and combine (2 copies of every token
  // each), allgather's all-gather each layer's dispatch (16 GPUs' tokens): 16 / 4 times as much.
  EXPECT_DOUBLE_EQ(allgather.all_gather.front()->size_bytes, 4 * alltoall.a2a.front()->size_bytes);
  EXPECT_EQ(allgather.a2a.size(), 0u);
  EXPECT_EQ(allgather.reduce_scatter.size(), allgather.all_gather.size());
  EXPECT_TRUE(g.report.feasible);
}

TEST(MoeDispatch, ThePlannerTriesEveryDispatcherAndAnAblationKeepsOne) {
  // Mixtral 8x7B-like (2 layers, 16 experts) on two DGX H100: the search estimates each plan with
  // experts split under every dispatcher; --moe-dispatcher D keeps D alone.
  ModelSpec m = load_model(test::shipped("workloads", "mixtral-8x7b"));
  m.layers = 2;
  m.moe->experts = 16;
  m.training.global_batch = 64;
  const Cluster c = h100_nodes(2);
  HybridOptions o;
  o.simulate = 1;
  for (MoeDispatcher d : {MoeDispatcher::kAllToAll, MoeDispatcher::kFlex}) {
    o.moe_dispatcher = d;
    HybridPlanner planner(m, c, CostModel{}, SimOptions{});
    const HybridSearch s = planner.search(HybridFlavour::kHetsim, o);
    ASSERT_GE(s.chosen, 0);
    const HybridPlan& p = s.judged[s.chosen].plan;
    const bool split = std::any_of(p.pipelines[0].stages.begin(), p.pipelines[0].stages.end(), [](const StagePlan& st) { return st.ep > 1; });
    EXPECT_TRUE(split);
    EXPECT_EQ(p.moe_dispatcher, d);
  }
  EXPECT_EQ(moe_dispatcher_from_name("flex"), MoeDispatcher::kFlex);
  EXPECT_EQ(moe_dispatcher_from_name("allgather"), MoeDispatcher::kAllGather);
  EXPECT_EQ(moe_dispatcher_names().size(), 3u);
}

TEST(MoeDispatch, RoundTripsThroughThePlanFileAndMegatronArgsAndRefusesWhatCannotRun) {
  ModelSpec m = load_model(test::shipped("workloads", "mixtral-8x7b"));
  m.layers = 4;
  m.training.global_batch = 32;
  const Cluster c = h100_nodes(1);
  HybridPlan p = test::one_stage_plan(8, 4, 4, 8, 1, 8);
  p.model = m.name;
  p.cluster = c.name;
  for (MoeDispatcher d : {MoeDispatcher::kAllToAll, MoeDispatcher::kAllGather, MoeDispatcher::kFlex}) {
    p.moe_dispatcher = d;
    const std::filesystem::path file =
        std::filesystem::temp_directory_path() / ("hetsim_dispatch_plan_" + std::to_string(::getpid()) + ".yaml");
    std::ofstream(file) << hybrid_plan_to_yaml(p);
    const HybridPlan back = load_hybrid_plan(file, m, c);
    std::filesystem::remove(file);
    EXPECT_EQ(back.moe_dispatcher, d);
    const std::string args = megatron_args(back, m, c).args;
    EXPECT_NE(args.find("--moe-token-dispatcher-type " + std::string(moe_dispatcher_name(d))), std::string::npos) << args;
  }
  p.moe_dispatcher = MoeDispatcher::kAllGather;
  p.overlap_moe_expert_parallel_comm = true;
  ASSERT_EQ(check_hybrid_plan(p, m, c).size(), 1u);
  EXPECT_EQ(check_hybrid_plan(p, m, c)[0].field, "moe_dispatcher");
  HybridPlan dense = p;
  dense.overlap_moe_expert_parallel_comm = false;
  dense.pipelines[0].stages[0].ep = 1;
  ASSERT_EQ(check_hybrid_plan(dense, m, c).size(), 1u);
  EXPECT_NE(check_hybrid_plan(dense, m, c)[0].message.find("ep > 1"), std::string::npos);
}

}  // namespace
}  // namespace hetsim
