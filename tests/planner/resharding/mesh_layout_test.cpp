// File: tests/planner/resharding/mesh_layout_test.cpp
// The layout algebra on the cross-mesh resharding paper's n->m cases: tiles, replica sets and
// destination-tile -> source-slice intersections with offsets.
#include "planner/resharding/mesh_layout.hpp"

#include <gtest/gtest.h>

#include "planner/resharding/test_meshes.hpp"

namespace hetsim {
namespace {

using test::consecutive_mesh;

using test::spec;

const std::vector<long> kTensor{1024, 1024, 512};

TEST(ShardingSpec, ParsesAndPrints) {
  EXPECT_EQ(spec_string(spec("S0, R,S01")), "S0,R,S01");
  ShardingSpec s;
  EXPECT_EQ(parse_sharding_spec("S0,S2", s), "\"S2\" (dimension 1) is not R, S0, S1 or S01 (replicated, split over hosts, over GPUs of a host, over both)");
  EXPECT_NE(parse_sharding_spec("", s), "");
}

TEST(MeshLayout, SplitOverHostsReplicatesInsideThem) {
  const MeshLayout l = make_layout(consecutive_mesh(2, 4, 0), spec("S0,R,R"), kTensor, 4);
  ASSERT_EQ(l.tiles.size(), 2u);
  EXPECT_EQ(l.tiles[0].replicas, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(l.tiles[1].replicas, (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(l.tiles[1].lo, (std::vector<long>{512, 0, 0}));
  EXPECT_EQ(l.tiles[1].hi, (std::vector<long>{1024, 1024, 512}));
  EXPECT_DOUBLE_EQ(l.tile_bytes(0), 1024.0 * 1024 * 512 * 4 / 2);
}

TEST(MeshLayout, BothAxesAreHostMajor) {
  // S01 over a 2x4 mesh: device (h, g) holds part 4h + g; S1 then S0 on two dimensions.
  const MeshLayout a = make_layout(consecutive_mesh(2, 4, 10), spec("S01,R,R"), kTensor, 4);
  ASSERT_EQ(a.tiles.size(), 8u);
  for (int t = 0; t < 8; ++t) EXPECT_EQ(a.tiles[t].replicas, (std::vector<int>{10 + t}));
  const MeshLayout b = make_layout(consecutive_mesh(2, 4, 0), spec("S1,S0,R"), kTensor, 4);
  ASSERT_EQ(b.tiles.size(), 8u);
  // Tile index = 2 * (part of dim 0 = g) + (part of dim 1 = h): device (h=1, g=2) is GPU 6.
  EXPECT_EQ(b.tiles[2 * 2 + 1].replicas, (std::vector<int>{6}));
  const MeshLayout r = make_layout(consecutive_mesh(2, 4, 0), spec("R,R,R"), kTensor, 4);
  ASSERT_EQ(r.tiles.size(), 1u);
  EXPECT_EQ(r.tiles[0].replicas.size(), 8u);
}

TEST(MeshLayout, ReportsWhatDoesNotFit) {
  EXPECT_EQ(layout_problem(consecutive_mesh(2, 4, 0), spec("S0,R"), kTensor),
            "the spec S0,R has 2 entries but the tensor has 3 dimensions");
  EXPECT_EQ(layout_problem(consecutive_mesh(2, 4, 0), spec("S0,S01,R"), kTensor),
            "the spec S0,S01,R splits more than one dimension over the same mesh axis");
  EXPECT_EQ(layout_problem(consecutive_mesh(3, 4, 0), spec("S0,R,R"), kTensor),
            "dimension 0 (size 1024) does not divide into 3 equal parts (S0 on a 3x4 mesh)");
  Mesh short_mesh = consecutive_mesh(2, 4, 0);
  short_mesh.devices.pop_back();
  EXPECT_NE(layout_problem(short_mesh, spec("S0,R,R"), kTensor), "");
  EXPECT_EQ(layout_problem(consecutive_mesh(3, 4, 0), spec("S0,R,R"), {3072, 1024, 170}), "");
}

TEST(Intersect, SplitOverDim1ToSplitOverDim0IsSixtyFourSlices) {
  // Case 4: S8 over dim 1 -> S8 over dim 0: every destination tile meets every source tile in
  // 1/64 of the tensor (128 x 128 x 512 int32 = 32 MiB).
  const MeshLayout src = make_layout(consecutive_mesh(2, 4, 0), spec("R,S01,R"), kTensor, 4);
  const MeshLayout dst = make_layout(consecutive_mesh(2, 4, 8), spec("S01,R,R"), kTensor, 4);
  const std::vector<Slice> s = intersect(src, dst);
  ASSERT_EQ(s.size(), 64u);
  double total = 0;
  for (const Slice& x : s) {
    EXPECT_DOUBLE_EQ(x.bytes, src.tensor_bytes() / 64);
    total += x.bytes;
  }
  EXPECT_DOUBLE_EQ(total, src.tensor_bytes());
  // Destination tile 3 (rows 384..511) from source tile 5 (columns 640..767).
  const Slice& x = s[3 * 8 + 5];
  EXPECT_EQ(x.dst_tile, 3);
  EXPECT_EQ(x.src_tile, 5);
  EXPECT_EQ(x.lo, (std::vector<long>{384, 640, 0}));
  EXPECT_EQ(x.hi, (std::vector<long>{512, 768, 512}));
  EXPECT_EQ(x.src_offset, (std::vector<long>{384, 0, 0}));
  EXPECT_EQ(x.dst_offset, (std::vector<long>{0, 640, 0}));
}

TEST(Intersect, TwoHostsToThreeCutsTheMiddleTile) {
  // Case 6: S2(dim 0) on (2,4) -> S3(dim 0) on (3,4), 3072 rows: destination tiles [0,1024),
  // [1024,2048), [2048,3072) against source tiles [0,1536), [1536,3072).
  const std::vector<long> t{3072, 1024, 170};
  const MeshLayout src = make_layout(consecutive_mesh(2, 4, 0), spec("S0,R,R"), t, 4);
  const MeshLayout dst = make_layout(consecutive_mesh(3, 4, 8), spec("S0,R,R"), t, 4);
  const std::vector<Slice> s = intersect(src, dst);
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[1].dst_tile, 1);
  EXPECT_EQ(s[1].src_tile, 0);
  EXPECT_EQ(s[1].src_offset[0], 1024);
  EXPECT_EQ(s[1].dst_offset[0], 0);
  EXPECT_EQ(s[1].hi[0] - s[1].lo[0], 512);
  EXPECT_EQ(s[2].src_tile, 1);
  EXPECT_EQ(s[2].src_offset[0], 0);
  EXPECT_EQ(s[2].dst_offset[0], 512);
  EXPECT_DOUBLE_EQ(s[0].bytes, 1024.0 * 1024 * 170 * 4);
}

TEST(Intersect, SameLayoutIsOneSlicePerTile) {
  // Case 1: identical layouts: each destination tile is its source tile.
  const MeshLayout src = make_layout(consecutive_mesh(2, 4, 0), spec("S0,R,R"), kTensor, 4);
  const MeshLayout dst = make_layout(consecutive_mesh(2, 4, 8), spec("S0,R,R"), kTensor, 4);
  const std::vector<Slice> s = intersect(src, dst);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].src_tile, 0);
  EXPECT_EQ(s[1].src_tile, 1);
}

}  // namespace
}  // namespace hetsim
