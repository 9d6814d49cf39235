// File: tests/sim/program_codec_test.cpp
// Programs as bytes and back (how they reach the simulation process).
#include "sim/program_codec.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace hetsim {
namespace {

Program every_kind_of_task() {
  Program p;
  p.strategy = "hybrid";
  p.devices = {{1e9, 312e12}, {2e9, 125e12}, {3e9, 383e12}, {1e9, 312e12}, {1e9, 312e12}, {1e9, 312e12}, {1e9, 312e12}};
  p.samples = 64;
  p.tokens = 131072;
  p.model_flops = 1.5e15;
  p.compute_source_s = {0.1, 0.2, 0.3, 0.4, 0.5};
  p.add({"fwd", ComputeTask{0, 1e-3, 2e9, 4e6, {1}}, {}});
  CollectiveTask g = collective(CollectiveOp::kAllGather, {0, 1, 2}, 600);
  g.algorithm = Algorithm::kGrouped;
  g.shard_bytes = {100, 200, 300};
  g.stream = CommStream::kTensor;
  p.add({"ag", g, {0}});
  CollectiveTask b = collective(CollectiveOp::kBroadcast, {2, 0}, 1e6);
  b.root = 2;
  p.add({"bcast", b, {0, 1}});
  CollectiveTask m = collective(CollectiveOp::kAllReduce, {0, 1}, 1e6);
  m.mirror_groups = {{2, 3}, {4, 5}};
  p.add({"mirrored", m, {}});
  p.add({"copies", ComputeTask{0, 1e-3, 0, 0, {1, 5, 6}, 2}, {}});
  p.add({"send copies", SendTask{0, 2, 64, CommStream::kPipeline, {{5, 6}}, 2}, {}});
  SendTask s{0, 2, 4096, CommStream::kPipelineBack, {{1, 2}, {0, 1}}};
  p.add({"send", s, {2}});
  p.add({"", ComputeTask{2, 0, 0, -4e6}, {3}});
  p.repeated_step = RepeatedStep{1, 2, 7};
  return p;
}

TEST(ProgramCodec, EveryKindOfTaskComesBackAsItWas) {
  const Program p = every_kind_of_task();
  Program q;
  q.devices.resize(1);
  q.add({"only", ComputeTask{0, 2, 0, 0}, {}});
  std::string bytes;
  encode_program(p, bytes);
  encode_program(q, bytes);
  std::string_view in = bytes;
  EXPECT_EQ(decode_program(in), p);
  EXPECT_EQ(decode_program(in), q);  // one after the other
  EXPECT_TRUE(in.empty());
}

TEST(ProgramCodec, BytesCutShortAreRefused) {
  std::string bytes;
  encode_program(every_kind_of_task(), bytes);
  for (size_t n = 0; n < bytes.size(); ++n) {
    std::string_view in(bytes.data(), n);
    EXPECT_THROW((void)decode_program(in), std::runtime_error) << n << " of " << bytes.size() << " bytes";
  }
}

}  // namespace
}  // namespace hetsim
