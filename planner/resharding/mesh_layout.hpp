// File: planner/resharding/mesh_layout.hpp
// The layout algebra of cross-mesh resharding: a mesh (hosts x GPUs per host), a sharding spec
// (per tensor dimension: replicated, or split over mesh axis 0, axis 1 or both), the tiles it
// cuts a tensor into with the devices holding each, and the slices in which a destination tile
// meets the source tiles, with their offsets.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace hetsim {

// A 2-D grid of devices: axis 0 the hosts, axis 1 the GPUs of a host. `devices` is row-major:
// device (h, g) is devices[h * gpus_per_host + g] (cluster GPU indices).
struct Mesh {
  int hosts = 1;
  int gpus_per_host = 1;
  std::vector<int> devices;

  [[nodiscard]] int size() const { return hosts * gpus_per_host; }
};

// How one tensor dimension maps onto the mesh. S01 splits it hosts x GPUs ways, host-major.
// Mesh axes no dimension uses hold replicas.
enum class DimSharding { kReplicated, kAxis0, kAxis1, kBoth };
using ShardingSpec = std::vector<DimSharding>;

// "S0,R,R" (one entry per tensor dimension: R, S0, S1 or S01). Returns what is wrong, or an
// empty string and the spec in `out`.
[[nodiscard]] std::string parse_sharding_spec(std::string_view text, ShardingSpec& out);
[[nodiscard]] std::string spec_string(const ShardingSpec& spec);

// A hyper-rectangle of the tensor, [lo, hi) per dimension, and the devices holding a copy.
struct Tile {
  std::vector<long> lo, hi;
  std::vector<int> replicas;  // in mesh order

  [[nodiscard]] double elements() const;
  friend bool operator==(const Tile&, const Tile&) = default;
};

// A tensor of `shape` with `element_bytes` per element, cut into tiles.
struct MeshLayout {
  std::vector<long> shape;
  double element_bytes = 4;
  std::vector<Tile> tiles;

  [[nodiscard]] double tensor_bytes() const;
  [[nodiscard]] double tile_bytes(int t) const { return tiles[t].elements() * element_bytes; }
  friend bool operator==(const MeshLayout&, const MeshLayout&) = default;
};

// Why `spec` cannot lay out `shape` on `mesh` (wrong rank, a mesh axis used twice, a dimension
// not divisible by its split, a mesh whose device list has the wrong length); empty when it can.
[[nodiscard]] std::string layout_problem(const Mesh& mesh, const ShardingSpec& spec, const std::vector<long>& shape);
// The tiles of `shape` under `spec` on `mesh`, in row-major order of their indices per
// dimension. Precondition: layout_problem() is empty.
[[nodiscard]] MeshLayout make_layout(const Mesh& mesh, const ShardingSpec& spec, const std::vector<long>& shape,
                                 double element_bytes);

// The part of source tile `src_tile` that destination tile `dst_tile` needs: the global box
// [lo, hi), and where it starts inside each tile (lo - tile.lo).
struct Slice {
  int dst_tile = 0;
  int src_tile = 0;
  std::vector<long> lo, hi;
  std::vector<long> src_offset, dst_offset;
  double bytes = 0;
};
// Every non-empty intersection of a destination tile with a source tile, destination tiles in
// order, then source tiles in order. Tiles may be uneven (any boxes covering the tensor).
[[nodiscard]] std::vector<Slice> intersect(const MeshLayout& src, const MeshLayout& dst);

}  // namespace hetsim
