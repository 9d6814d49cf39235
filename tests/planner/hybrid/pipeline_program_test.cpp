// File: tests/planner/hybrid/pipeline_program_test.cpp
// Pipeline schedules as programs: closed forms for equal stages with free communication, and the
// activations each schedule holds.
#include "planner/hybrid/pipeline_program.hpp"

#include <gtest/gtest.h>

#include "base/text.hpp"
#include "planner/hybrid/hybrid_planner.hpp"
#include "planner/hybrid/pipeline_schedule.hpp"
#include "one_stage_plan.hpp"
#include "sim/executor.hpp"
#include "test_support.hpp"

namespace hetsim {
namespace {

constexpr double kF = 0.01;  // forward seconds of one layer; backward B = F, W = F

// Every layer: forward kF, backward 2 kF (half of it weight gradient), one byte of activations;
// embedding and head free; nothing to send, nothing to synchronise.
class EqualStages : public ::testing::Test {
 protected:
  Cluster cluster_ = test::shipped_cluster("a100-8x8");
  std::vector<BlockWork> blocks_;
  PipelineContext ctx_;

  void SetUp() override {
    set_layers(16);
    ctx_.state_bytes_per_param.assign(cluster_.node_types.size(), 16);  // mixed-precision Adam
    ctx_.copy_bytes_per_param.assign(cluster_.node_types.size(), 0);
  }

  // An embedding, `layers` equal layers (F, B and W of kF each) and a head.
  void set_layers(int layers) {
    blocks_.resize(2 + static_cast<size_t>(layers));
    for (size_t b = 0; b < blocks_.size(); ++b) {
      blocks_[b].name = indexed_name("b", b);
      blocks_[b].parts.resize(1);
      if (b == 0 || b + 1 == blocks_.size()) continue;
      WorkPart& part = blocks_[b].parts[0];
      part.fwd_s = part.bwd_input_s = part.bwd_weight_s = kF;
      blocks_[b].saved_bytes = 1;
    }
  }

  // P stages on GPUs 0, 8, 16, ... (one per node), `chunks` layers per stage, one per chunk.
  HybridPlan plan(PipelineSchedule s, int P, int m, int chunks = 1) const {
    HybridPlan p;
    p.schedule = s;
    p.micro_batch = 1;
    PipelinePlan pl;
    pl.micro_batches = m;
    for (int i = 0; i < P; ++i) {
      StagePlan st;
      st.devices = {8 * i};
      for (int c = 0; c < chunks; ++c) st.chunks.push_back({c * P + i, c * P + i});
      pl.stages.push_back(st);
    }
    p.pipelines.push_back(pl);
    return p;
  }

  PipelineProgram build(const HybridPlan& p) const {
    const StageWorkFn fn = [this](int, const StageWorkKey&) -> const std::vector<BlockWork>& { return blocks_; };
    return build_pipeline_program(p, cluster_, fn, ctx_);
  }
  double time(const HybridPlan& p) const { return simulate(build(p).program, cluster_).iteration_time_s; }
};

TEST_F(EqualStages, OneFOneBTakesMPlusPMinusOneStageTimes) {
  // T = (m + P - 1) x (F + B + W) for equal stages and free communication.
  for (auto [P, m] : {std::pair{4, 8}, std::pair{2, 5}, std::pair{8, 8}, std::pair{4, 1}}) {
    SCOPED_TRACE("P=" + std::to_string(P) + " m=" + std::to_string(m));
    const double expected = (m + P - 1) * 3 * kF;
    EXPECT_NEAR(time(plan(PipelineSchedule::kOneFOneB, P, m)), expected, 1e-9 * expected);
    EXPECT_NEAR(time(plan(PipelineSchedule::kGpipe, P, m)), expected, 1e-9 * expected);
  }
}

TEST_F(EqualStages, InterleavingShrinksTheBubbleByTheChunkCount) {
  // Stage time per micro-batch T = v x 3F; interleaved: m T + (P - 1) T / v.
  const int P = 4, m = 8;
  for (int v : {2, 4}) {
    SCOPED_TRACE("v=" + std::to_string(v));
    const double stage = v * 3 * kF;
    const double expected = m * stage + (P - 1) * stage / v;
    EXPECT_NEAR(time(plan(PipelineSchedule::kInterleaved, P, m, v)), expected, 1e-9 * expected);
  }
}

TEST_F(EqualStages, ZeroBubbleFillsTheBubblesWithWeightGradients) {
  // ZB-H1 with F = B = W: m (F + B + W) + (P - 1)(F + B - W) = (3m + P - 1) F, against 1F1B's
  // (3m + 3(P - 1)) F.
  const int P = 4, m = 8;
  const double expected = (3 * m + P - 1) * kF;
  EXPECT_NEAR(time(plan(PipelineSchedule::kZeroBubble, P, m)), expected, 1e-9 * expected);
  EXPECT_LT(expected, time(plan(PipelineSchedule::kOneFOneB, P, m)));
}

TEST_F(EqualStages, ZeroBubbleRunsEveryPassWithFewerMicroBatchesThanStages) {
  // With one micro-batch nothing overlaps: P forwards, P backwards, then the last weight
  // gradient, (2P + 1) F. (Found: the list scheduler gave up when the first stage had nothing
  // to wait for, leaving the later stages without a pass; the planner then preferred that plan.)
  for (int P : {2, 3, 4, 8}) {
    SCOPED_TRACE("P=" + std::to_string(P));
    const double expected = (2 * P + 1) * kF;
    EXPECT_NEAR(time(plan(PipelineSchedule::kZeroBubble, P, 1)), expected, 1e-9 * expected);
  }
  // Every stage gets m forwards, backwards and weight gradients, whatever P and m.
  for (int P = 1; P <= 8; ++P) {
    for (int m = 1; m <= 12; ++m) {
      const std::vector<double> f(P, 1.0), b(P, 1.3), w(P, 0.7);
      const auto orders = zero_bubble_orders(P, m, f, b, w, 0.05);
      for (int s = 0; s < P; ++s) {
        int count[3] = {0, 0, 0};
        for (const PipelineStep& st : orders[s]) ++count[static_cast<int>(st.pass)];
        EXPECT_EQ(count[0], m) << "P=" << P << " m=" << m << " stage " << s;
        EXPECT_EQ(count[1], m) << "P=" << P << " m=" << m << " stage " << s;
        EXPECT_EQ(count[2], m) << "P=" << P << " m=" << m << " stage " << s;
      }
    }
  }
}

TEST_F(EqualStages, ActivationsHeldFollowTheSchedule) {
  // One byte per micro-batch in flight: 1F1B holds P - i on stage i, GPipe m, eager 2(P - i) - 1.
  const int P = 4, m = 8;
  const PipelineProgram one = build(plan(PipelineSchedule::kOneFOneB, P, m));
  const PipelineProgram gpipe = build(plan(PipelineSchedule::kGpipe, P, m));
  const PipelineProgram eager = build(plan(PipelineSchedule::kEager, P, m));
  for (int i = 0; i < P; ++i) {
    SCOPED_TRACE("stage " + std::to_string(i));
    EXPECT_EQ(one.peak_memory_bytes[8 * i], P - i);
    EXPECT_EQ(gpipe.peak_memory_bytes[8 * i], m);
    EXPECT_EQ(eager.peak_memory_bytes[8 * i], std::min(m, 2 * (P - i) - 1));
    // The simulator's own memory accounting agrees.
    EXPECT_EQ(simulate(eager.program, cluster_).devices[8 * i].peak_memory_bytes, std::min(m, 2 * (P - i) - 1));
  }
}

TEST_F(EqualStages, EagerHidesLongForwardTransfers) {
  // Each boundary tensor takes one forward time F on the network (250 MB at 25 GB/s). Under
  // 1F1B a stage waits for every forward transfer; eager 1F1B has later forwards to run meanwhile.
  for (BlockWork& b : blocks_) b.output_bytes = 25e9 * kF;
  const int P = 4, m = 8;
  const double one = time(plan(PipelineSchedule::kOneFOneB, P, m));
  const double eager = time(plan(PipelineSchedule::kEager, P, m));
  EXPECT_LE(eager, one);
  EXPECT_LT(eager, 0.95 * one);
  // Never slower, whatever the transfer time.
  for (double scale : {0.0, 0.25, 4.0}) {
    for (BlockWork& b : blocks_) b.output_bytes = 25e9 * kF * scale;
    EXPECT_LE(time(plan(PipelineSchedule::kEager, P, m)), time(plan(PipelineSchedule::kOneFOneB, P, m)) * (1 + 1e-9))
        << "scale " << scale;
  }
}

TEST_F(EqualStages, TransfersIssuedWhenConsumedSitOnTheCriticalPath) {
  // Overlap off: a transfer starts only when the receiving stage is ready for it, as in Alpa's
  // baseline emitter, so eager 1F1B cannot hide it.
  for (BlockWork& b : blocks_) b.output_bytes = 25e9 * kF;
  const int P = 4, m = 8;
  HybridPlan p = plan(PipelineSchedule::kEager, P, m);
  const double produced = time(p);
  p.resharding.overlap = false;
  const double consumed = time(p);
  EXPECT_GT(consumed, produced * 1.05);
  // With free transfers the two agree.
  for (BlockWork& b : blocks_) b.output_bytes = 0;
  EXPECT_NEAR(time(p), time(plan(PipelineSchedule::kEager, P, m)), 1e-6);
}

TEST_F(EqualStages, TensorParallelCollectivesBlockTheNextKernel) {
  // One stage of 8 GPUs in TP: every layer all-reduces 64 MB after its forward and its backward.
  // Megatron's TP collectives sit between kernels, so the iteration takes compute + collectives:
  // no kernel of the next pass (or the optimizer) starts under the previous pass's all-reduce.
  for (size_t b = 1; b + 1 < blocks_.size(); ++b) {
    blocks_[b].parts[0].tp_fwd.all_reduce = 64e6;
    blocks_[b].parts[0].tp_bwd.all_reduce = 64e6;
  }
  HybridPlan p;
  p.schedule = PipelineSchedule::kOneFOneB;
  p.micro_batch = 1;
  PipelinePlan pl;
  pl.micro_batches = 3;
  pl.stages.push_back(StagePlan{{0, 1, 2, 3, 4, 5, 6, 7}, 8, {{0, 15}}});
  p.pipelines.push_back(pl);
  const double full = time(p);
  for (BlockWork& b : blocks_) {
    for (WorkPart& part : b.parts) part.fwd_s = part.bwd_input_s = part.bwd_weight_s = 0;
  }
  const double comm = time(p);
  EXPECT_GT(comm, 0);
  EXPECT_NEAR(full, 3 * 16 * 3 * kF + comm, 1e-6 * full);
}

TEST_F(EqualStages, TpCommOverlapHidesBackwardCollectivesUnderWeightGradients) {
  // As above, with each layer's weight gradient (kF) able to hide its backward all-reduce: with
  // tp_comm_overlap the backward collectives (half of all the TP traffic) leave the critical path,
  // the forward ones stay.
  for (size_t b = 1; b + 1 < blocks_.size(); ++b) {
    WorkPart& part = blocks_[b].parts[0];
    part.tp_fwd.all_reduce = part.tp_bwd.all_reduce = 64e6;
    part.bwd_overlap_s = kF;
  }
  HybridPlan p;
  p.schedule = PipelineSchedule::kOneFOneB;
  PipelinePlan pl;
  pl.micro_batches = 3;
  pl.stages.push_back(StagePlan{{0, 1, 2, 3, 4, 5, 6, 7}, 8, {{0, 15}}});
  p.pipelines.push_back(pl);
  const double serial = time(p);
  p.tp_comm_overlap = true;
  const double overlapped = time(p);
  std::vector<BlockWork> saved = blocks_;
  for (BlockWork& b : blocks_) {
    for (WorkPart& part : b.parts) part.fwd_s = part.bwd_input_s = part.bwd_weight_s = 0;
  }
  const double comm = time(p);
  blocks_ = saved;
  EXPECT_NEAR(overlapped, serial - comm / 2, 1e-6 * serial);
  // Zero bubble defers the weight gradients: nothing to hide under, the collectives stay serial.
  p.schedule = PipelineSchedule::kZeroBubble;
  const double zb_overlap = time(p);
  p.tp_comm_overlap = false;
  EXPECT_NEAR(zb_overlap, time(p), 1e-9 * serial);
}

TEST_F(EqualStages, GradSyncAfterBackwardAddsTheWholeSync) {
  // Two data-parallel copies of one stage on two nodes, 10 M parameters per layer. Overlapped, the
  // gradient buckets all-reduce under the rest of the backward; with grad_sync_overlap false
  // (Megatron's local DDP) they start after the last backward: compute + the sync alone, exactly.
  for (size_t b = 1; b + 1 < blocks_.size(); ++b) blocks_[b].params = 10e6;
  HybridPlan p;
  p.schedule = PipelineSchedule::kOneFOneB;
  for (int copy = 0; copy < 2; ++copy) {
    PipelinePlan pl;
    pl.micro_batches = 2;
    pl.stages.push_back(StagePlan{{8 * copy}, 1, {{0, 15}}});
    p.pipelines.push_back(pl);
  }
  const double overlapped = time(p);
  p.grad_sync_overlap = false;
  const double after = time(p);
  std::vector<BlockWork> saved = blocks_;
  for (BlockWork& b : blocks_) {
    for (WorkPart& part : b.parts) part.fwd_s = part.bwd_input_s = part.bwd_weight_s = 0;
  }
  const double sync = time(p);
  blocks_ = saved;
  const double compute = 2 * 16 * 3 * kF;
  EXPECT_GT(sync, kF);  // the sync is long enough to matter
  EXPECT_NEAR(after, compute + sync, 1e-9 * after);
  EXPECT_LT(overlapped, after - kF);
  EXPECT_GE(overlapped, compute);
}

// Two data-parallel copies of one stage (GPUs 0 and 8, one per node), 10 M parameters per layer:
// with Megatron's 40 M-parameter buckets, four buckets of four layers each.
HybridPlan two_copies(PipelineSchedule s, int stages, int m, int chunks = 1) {
  HybridPlan p;
  p.schedule = s;
  const int layers = 16 / (stages * chunks);
  for (int copy = 0; copy < 2; ++copy) {
    PipelinePlan pl;
    pl.micro_batches = m;
    for (int i = 0; i < stages; ++i) {
      StagePlan st;
      st.devices = {8 * (copy + 2 * i)};
      for (int c = 0; c < chunks; ++c) {
        const int first = (c * stages + i) * layers;
        st.chunks.push_back({first, first + layers - 1});
      }
      pl.stages.push_back(st);
    }
    p.pipelines.push_back(pl);
  }
  return p;
}

TEST_F(EqualStages, OverlapParamGatherLeavesOnlyTheFirstBucketExposed) {
  // ZeRO-1 without overlap_param_gather all-gathers the four buckets' updated weights after the
  // step: T_after = T_rest + 4G, G one bucket's all-gather (80 MB over two nodes). Overlapped, the
  // gathers run back to back from the start and each bucket's first forward (four layers, 4F = 40
  // ms > G) waits for its own: only the first is exposed, T_overlap = T_rest + G = T_after - 3G.
  for (size_t b = 1; b + 1 < blocks_.size(); ++b) blocks_[b].params = 10e6;
  HybridPlan p = two_copies(PipelineSchedule::kOneFOneB, 1, 2);
  p.gradient_sync = GradientSync::kZero1;
  const double after = time(p);
  p.overlap_param_gather = true;
  const double overlapped = time(p);
  Program one;
  one.devices.resize(cluster_.gpu_count());
  one.add({"gather", collective(CollectiveOp::kAllGather, {0, 8}, 40e6 * ctx_.weight_bytes_per_param), {}});
  const double gather = simulate(one, cluster_).iteration_time_s;
  ASSERT_GT(gather, 1e-4);
  ASSERT_LT(gather, 4 * kF);
  EXPECT_NEAR(overlapped, after - 3 * gather, 1e-6 * after);
  // A forward too short to hide them: every gather waits for the one before and the forwards for
  // them, so nothing is gained (compute free: T = 4G + the rest, as after the step).
  for (BlockWork& b : blocks_) {
    for (WorkPart& part : b.parts) part.fwd_s = part.bwd_input_s = part.bwd_weight_s = 0;
  }
  const double free_overlapped = time(p);
  p.overlap_param_gather = false;
  EXPECT_NEAR(free_overlapped, time(p), 1e-6 * free_overlapped);
}

TEST_F(EqualStages, GradientBucketsSyncUnderTheBackwardInEverySchedule) {
  // Two pipelines (copies) of two stages, 16 layers of 10 M parameters: stage 0 holds two buckets
  // (four layers each, in one chunk or in two). Synced after the last backward (grad_sync_overlap
  // false), both buckets' syncs S follow it; overlapped, the bucket whose gradients are ready first
  // syncs under the backward of the other (four layers, 8F = 80 ms > S), so exactly one S leaves the
  // critical path: T_overlap = T_after - S, in every schedule, for all-reduce and ZeRO-1's
  // reduce-scatter alike.
  for (size_t b = 1; b + 1 < blocks_.size(); ++b) blocks_[b].params = 10e6;
  for (auto [s, chunks] : {std::pair{PipelineSchedule::kGpipe, 1}, std::pair{PipelineSchedule::kOneFOneB, 1},
                           std::pair{PipelineSchedule::kInterleaved, 2}, std::pair{PipelineSchedule::kEager, 1},
                           std::pair{PipelineSchedule::kZeroBubble, 1}}) {
    for (GradientSync sync : {GradientSync::kAllReduce, GradientSync::kZero1}) {
      SCOPED_TRACE(std::string(schedule_name(s)) + " " + std::string(gradient_sync_name(sync)));
      HybridPlan p = two_copies(s, 2, 4, chunks);
      p.gradient_sync = sync;
      const double overlapped = time(p);
      p.grad_sync_overlap = false;
      const double after = time(p);
      Program one;
      one.devices.resize(cluster_.gpu_count());
      const CollectiveOp op = sync == GradientSync::kZero1 ? CollectiveOp::kReduceScatter : CollectiveOp::kAllReduce;
      one.add({"bucket", collective(op, {0, 8}, 40e6 * ctx_.grad_bytes_per_param), {}});
      const double bucket = simulate(one, cluster_).iteration_time_s;
      ASSERT_GT(bucket, 1e-4);
      EXPECT_NEAR(overlapped, after - bucket, 1e-6 * after);
    }
  }
}

TEST_F(EqualStages, RepeatingMicroBatchesAreHeldTwiceWithTheTimesOfEveryOne) {
  // Past its warm-up every schedule repeats micro-batch after micro-batch: the program holds two
  // periods of its steady state (Program::repeated_step) and the simulator adds the rest. The
  // times, busy figures and memory equal those of the program with every micro-batch written out,
  // and the held program does not grow with the micro-batches. Boundary tensors take a quarter of
  // a forward on the network, so transfers run beside the compute.
  for (BlockWork& b : blocks_) b.output_bytes = 25e9 * kF / 4;
  const int P = 4;
  for (auto [s, chunks] : {std::pair{PipelineSchedule::kOneFOneB, 1}, std::pair{PipelineSchedule::kInterleaved, 2},
                           std::pair{PipelineSchedule::kEager, 1}, std::pair{PipelineSchedule::kZeroBubble, 1}}) {
    SCOPED_TRACE(std::string(schedule_name(s)));
    const HybridPlan p = plan(s, P, 128, chunks);
    ctx_.fold_rounds = false;
    const PipelineProgram every = build(p);
    ctx_.fold_rounds = true;
    const PipelineProgram folded = build(p);
    ASSERT_TRUE(folded.program.repeated_step.has_value());
    EXPECT_FALSE(every.program.repeated_step.has_value());
    EXPECT_LT(folded.program.tasks.size() * 2, every.program.tasks.size());
    EXPECT_EQ(folded.peak_memory_bytes, every.peak_memory_bytes);
    const SimResult a = simulate(every.program, cluster_), b = simulate(folded.program, cluster_);
    const double tol = 1e-9 * a.iteration_time_s;
    EXPECT_NEAR(b.iteration_time_s, a.iteration_time_s, tol);
    for (int i = 0; i < P; ++i) {
      const int d = 8 * i;
      EXPECT_NEAR(b.devices[d].compute_s, a.devices[d].compute_s, tol) << d;
      EXPECT_NEAR(b.devices[d].comm_s, a.devices[d].comm_s, tol) << d;
      EXPECT_NEAR(b.devices[d].busy_s, a.devices[d].busy_s, tol) << d;
      EXPECT_DOUBLE_EQ(b.devices[d].peak_memory_bytes, a.devices[d].peak_memory_bytes) << d;
    }
    // Four times the micro-batches: the same program held, give or take the one period where the
    // drain begins (the last period the steady state repeats whole depends on m).
    const PipelineProgram more = build(plan(s, P, 512, chunks));
    const size_t period = static_cast<size_t>(folded.program.repeated_step->size);
    EXPECT_LE(more.program.tasks.size(), folded.program.tasks.size() + period);
    EXPECT_GE(more.program.tasks.size() + period, folded.program.tasks.size());
  }
  // The closed form of 1F1B holds for a thousand micro-batches held as a few:
  // T = (m + P - 1) x (F + B + W) with free communication.
  for (BlockWork& b : blocks_) b.output_bytes = 0;
  const PipelineProgram thousand = build(plan(PipelineSchedule::kOneFOneB, P, 1000));
  ASSERT_TRUE(thousand.program.repeated_step.has_value());
  EXPECT_LT(thousand.program.tasks.size(), 300u);  // for 8000 passes
  const double expected = (1000 + P - 1) * 3 * kF;
  EXPECT_NEAR(simulate(thousand.program, cluster_).iteration_time_s, expected, 1e-9 * expected);
}

TEST_F(EqualStages, ASixtyFourStagePipelineFoldsAsAShallowOneDoes) {
  // Megatron's 1T shape: 64 stages, one GPU each here, 256 micro-batches. The steady state must
  // repeat within what the folder searches (it repeated only every 63 sweeps of the stages,
  // 8192 locksteps, when each stage emitted every step it had ready at once): held as its
  // warm-up, two periods and its drain, and simulated the same as written out whole.
  const int P = 64, m = 256;
  set_layers(P);
  for (size_t b = 1; b + 1 < blocks_.size(); ++b) blocks_[b].output_bytes = 25e9 * kF / 4;
  HybridPlan p = plan(PipelineSchedule::kOneFOneB, P, m);
  for (int i = 0; i < P; ++i) p.pipelines[0].stages[static_cast<size_t>(i)].devices = {i};
  ctx_.fold_rounds = false;
  const PipelineProgram every = build(p);
  ctx_.fold_rounds = true;
  const PipelineProgram folded = build(p);
  ASSERT_TRUE(folded.program.repeated_step.has_value());
  EXPECT_LE(folded.program.repeated_step->size, 2 * P * 8);  // two sweeps of the stages (a few tasks a step)
  EXPECT_LT(folded.program.tasks.size(), every.program.tasks.size() / 3);
  const SimResult a = simulate(every.program, cluster_), b = simulate(folded.program, cluster_);
  EXPECT_NEAR(b.iteration_time_s, a.iteration_time_s, 1e-9 * a.iteration_time_s);
  for (int d : {0, 1, 31, 62, 63}) EXPECT_NEAR(b.devices[d].busy_s, a.devices[d].busy_s, 1e-9 * a.iteration_time_s) << d;
}

TEST_F(EqualStages, FoldedPipelinesKeepTheirGradientSynchronisation) {
  // Two pipelines (data-parallel copies) with 10 M parameters per layer: the gradient all-reduces
  // after the last micro-batch wait for tasks the emitter held while folding. Folded or not (and a
  // fold that saves little, written back), the same iteration. (Found: writing a fold back before
  // the gradient synchronisation pointed the all-reduces at the wrong tasks: 0.4 to 10 % off.)
  for (size_t b = 1; b + 1 < blocks_.size(); ++b) blocks_[b].params = 10e6;
  for (BlockWork& b : blocks_) b.output_bytes = 25e9 * kF / 4;
  for (int m : {12, 24, 40, 128}) {  // ZB at 12, 1F1B at 24, eager at 40 fold little: written back
    for (PipelineSchedule s : {PipelineSchedule::kOneFOneB, PipelineSchedule::kEager, PipelineSchedule::kZeroBubble}) {
      SCOPED_TRACE(std::string(schedule_name(s)) + " m=" + std::to_string(m));
      HybridPlan p = plan(s, 4, m);
      PipelinePlan second = p.pipelines[0];
      for (StagePlan& st : second.stages) st.devices = {st.devices[0] + 1};
      p.pipelines.push_back(second);
      ctx_.fold_rounds = false;
      const PipelineProgram every = build(p);
      ctx_.fold_rounds = true;
      const PipelineProgram folded = build(p);
      const SimResult a = simulate(every.program, cluster_), b = simulate(folded.program, cluster_);
      EXPECT_NEAR(b.iteration_time_s, a.iteration_time_s, 1e-9 * a.iteration_time_s);
      for (int d : {0, 1, 8, 9, 24, 25}) {
        EXPECT_NEAR(b.devices[d].comm_s, a.devices[d].comm_s, 1e-9 * a.iteration_time_s) << d;
        EXPECT_NEAR(b.devices[d].busy_s, a.devices[d].busy_s, 1e-9 * a.iteration_time_s) << d;
      }
    }
  }
}

TEST(StageOrder, EveryScheduleRunsEachPassOnce) {
  for (PipelineSchedule s : {PipelineSchedule::kGpipe, PipelineSchedule::kOneFOneB, PipelineSchedule::kInterleaved,
                             PipelineSchedule::kEager, PipelineSchedule::kZeroBubble}) {
    const int chunks = s == PipelineSchedule::kInterleaved ? 2 : 1;
    for (int stage = 0; stage < 4; ++stage) {
      const std::vector<PipelineStep> order = stage_order(s, stage, 4, 8, chunks);
      int f = 0, b = 0, w = 0;
      for (const PipelineStep& st : order) (st.pass == PassKind::kForward ? f : st.pass == PassKind::kBackward ? b : w)++;
      EXPECT_EQ(f, 8 * chunks);
      EXPECT_EQ(b, 8 * chunks);
      EXPECT_EQ(w, splits_weight_gradient(s) ? 8 : 0);
    }
  }
  // The closed form agrees with the orders.
  for (PipelineSchedule s : {PipelineSchedule::kGpipe, PipelineSchedule::kOneFOneB, PipelineSchedule::kInterleaved,
                             PipelineSchedule::kEager, PipelineSchedule::kZeroBubble}) {
    const int chunks = s == PipelineSchedule::kInterleaved ? 2 : 1;
    for (int m : {4, 8, 12}) {
      for (int stage = 0; stage < 4; ++stage) {
        EXPECT_EQ(in_flight_bound(s, stage, 4, m, chunks), max_in_flight(stage_order(s, stage, 4, m, chunks)))
            << schedule_name(s) << " m=" << m << " stage " << stage;
      }
    }
  }
  // 1F1B on the first of 4 stages: 3 warm-up forwards, then alternating.
  const std::vector<PipelineStep> o = stage_order(PipelineSchedule::kOneFOneB, 0, 4, 6, 1);
  EXPECT_EQ(o[3], (PipelineStep{PassKind::kForward, 3, 0}));
  EXPECT_EQ(o[4], (PipelineStep{PassKind::kBackward, 0, 0}));
  EXPECT_EQ(max_in_flight(o), 4);
}

TEST(PipelineProgram, ZeroThreeGathersTheRestOfAChunkUnderItsPass) {
  // FSDP's prefetch: each pass waits for its first block's weights alone; the rest of the chunk's
  // arrive while its kernels run, and the next pass on the GPU waits for them. Llama 3 70B cut to 8
  // layers, one stage of two DGX H100 copies (TP 8, ZeRO-3 over the two).
  ModelSpec m = load_model(test::shipped("workloads", "llama3-70b"));
  m.layers = 8;
  m.training.global_batch = 8;
  const Cluster c = test::h100_nodes(2);
  HybridPlan plan = test::one_stage_plan(16, 8, 4, 2, 8);
  plan.gradient_sync = GradientSync::kZero3;
  ASSERT_TRUE(check_hybrid_plan(plan, m, c).empty());
  const Evaluation ev = HybridPlanner(m, c, CostModel{}, SimOptions{}).evaluate(plan, "zero-3");
  ASSERT_TRUE(ev.report.feasible) << ev.report.infeasible_reason;
  int prefetches = 0, hidden = 0;
  for (size_t i = 0; i < ev.program.tasks.size(); ++i) {
    const Task& t = ev.program.tasks[i];
    const auto* ag = std::get_if<CollectiveTask>(&t.body);
    if (t.label.find(".prefetch") == std::string::npos || ag == nullptr) continue;
    if (std::find(ag->group.begin(), ag->group.end(), 0) == ag->group.end()) continue;  // device 0's
    ++prefetches;
    const TaskTiming& at = ev.result.tasks[i];
    for (size_t k = 0; k < ev.program.tasks.size(); ++k) {
      const auto* comp = std::get_if<ComputeTask>(&ev.program.tasks[k].body);
      if (comp == nullptr || comp->device != 0) continue;
      const TaskTiming& ct = ev.result.tasks[k];
      if (std::min(at.end_s, ct.end_s) - std::max(at.start_s, ct.start_s) > 0) {
        ++hidden;
        break;
      }
    }
  }
  EXPECT_EQ(prefetches, 4 * 2);   // TP rank 0's: 4 micro-batches x 2 passes
  EXPECT_EQ(hidden, prefetches);  // each beside device 0's kernels (one stage: no pass waits on a neighbour)
}

}  // namespace
}  // namespace hetsim
