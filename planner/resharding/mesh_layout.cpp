// File: planner/resharding/mesh_layout.cpp
#include "planner/resharding/mesh_layout.hpp"

#include <algorithm>


namespace hetsim {
namespace {

std::string_view name_of(DimSharding d) {
  switch (d) {
    case DimSharding::kReplicated: return "R";
    case DimSharding::kAxis0: return "S0";
    case DimSharding::kAxis1: return "S1";
    case DimSharding::kBoth: return "S01";
  }
  return "?";
}

// How many parts a dimension is cut into on `mesh`.
long parts(DimSharding d, const Mesh& mesh) {
  switch (d) {
    case DimSharding::kReplicated: return 1;
    case DimSharding::kAxis0: return mesh.hosts;
    case DimSharding::kAxis1: return mesh.gpus_per_host;
    case DimSharding::kBoth: return static_cast<long>(mesh.hosts) * mesh.gpus_per_host;
  }
  return 1;
}

// Which part of a dimension device (h, g) holds.
long part_of(DimSharding d, const Mesh& mesh, int h, int g) {
  switch (d) {
    case DimSharding::kReplicated: return 0;
    case DimSharding::kAxis0: return h;
    case DimSharding::kAxis1: return g;
    case DimSharding::kBoth: return static_cast<long>(h) * mesh.gpus_per_host + g;
  }
  return 0;
}

}  // namespace

double Tile::elements() const {
  double n = 1;
  for (size_t d = 0; d < lo.size(); ++d) n *= static_cast<double>(hi[d] - lo[d]);
  return n;
}

double MeshLayout::tensor_bytes() const {
  double n = element_bytes;
  for (long s : shape) n *= static_cast<double>(s);
  return n;
}

std::string parse_sharding_spec(std::string_view text, ShardingSpec& out) {
  out.clear();
  if (text.empty()) return "the spec is empty; write one entry per tensor dimension, e.g. \"S0,R,R\"";
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    std::string_view item = text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (item == "R") {
      out.push_back(DimSharding::kReplicated);
    } else if (item == "S0") {
      out.push_back(DimSharding::kAxis0);
    } else if (item == "S1") {
      out.push_back(DimSharding::kAxis1);
    } else if (item == "S01") {
      out.push_back(DimSharding::kBoth);
    } else {
      std::string why = "\"";
      why.append(item).append("\" (dimension ").append(std::to_string(out.size()));
      return why.append(") is not R, S0, S1 or S01 (replicated, split over hosts, over GPUs of a host, over both)");
    }
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return "";
}

std::string spec_string(const ShardingSpec& spec) {
  std::string s;
  for (size_t d = 0; d < spec.size(); ++d) {
    if (d > 0) s += ',';
    s += name_of(spec[d]);
  }
  return s;
}

std::string layout_problem(const Mesh& mesh, const ShardingSpec& spec, const std::vector<long>& shape) {
  if (mesh.hosts < 1 || mesh.gpus_per_host < 1) return "the mesh shape must be at least 1x1";
  if (static_cast<long>(mesh.devices.size()) != static_cast<long>(mesh.hosts) * mesh.gpus_per_host) {
    return "the mesh shape " + std::to_string(mesh.hosts) + "x" + std::to_string(mesh.gpus_per_host) + " has " +
           std::to_string(mesh.size()) + " places but " + std::to_string(mesh.devices.size()) + " devices are listed";
  }
  if (spec.size() != shape.size()) {
    return "the spec " + spec_string(spec) + " has " + std::to_string(spec.size()) + " entries but the tensor has " +
           std::to_string(shape.size()) + " dimensions";
  }
  int uses0 = 0, uses1 = 0;
  for (DimSharding d : spec) {
    uses0 += d == DimSharding::kAxis0 || d == DimSharding::kBoth;
    uses1 += d == DimSharding::kAxis1 || d == DimSharding::kBoth;
  }
  if (uses0 > 1 || uses1 > 1) {
    return "the spec " + spec_string(spec) + " splits more than one dimension over the same mesh axis";
  }
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] < 1) return "dimension " + std::to_string(d) + " has size " + std::to_string(shape[d]);
    const long k = parts(spec[d], mesh);
    if (shape[d] % k != 0) {
      return "dimension " + std::to_string(d) + " (size " + std::to_string(shape[d]) + ") does not divide into " +
             std::to_string(k) + " equal parts (" + std::string(name_of(spec[d])) + " on a " + std::to_string(mesh.hosts) +
             "x" + std::to_string(mesh.gpus_per_host) + " mesh)";
    }
  }
  return "";
}

MeshLayout make_layout(const Mesh& mesh, const ShardingSpec& spec, const std::vector<long>& shape, double element_bytes) {
  MeshLayout out;
  out.shape = shape;
  out.element_bytes = element_bytes;
  const size_t rank = shape.size();
  std::vector<long> count(rank), stride(rank);
  long tiles = 1;
  for (size_t d = rank; d-- > 0;) {
    count[d] = parts(spec[d], mesh);
    stride[d] = tiles;
    tiles *= count[d];
  }
  out.tiles.resize(static_cast<size_t>(tiles));
  for (long t = 0; t < tiles; ++t) {
    Tile& tile = out.tiles[t];
    tile.lo.resize(rank);
    tile.hi.resize(rank);
    for (size_t d = 0; d < rank; ++d) {
      const long index = (t / stride[d]) % count[d];
      const long extent = shape[d] / count[d];
      tile.lo[d] = index * extent;
      tile.hi[d] = tile.lo[d] + extent;
    }
  }
  for (int h = 0; h < mesh.hosts; ++h) {
    for (int g = 0; g < mesh.gpus_per_host; ++g) {
      long t = 0;
      for (size_t d = 0; d < rank; ++d) t += part_of(spec[d], mesh, h, g) * stride[d];
      out.tiles[t].replicas.push_back(mesh.devices[static_cast<size_t>(h) * mesh.gpus_per_host + g]);
    }
  }
  return out;
}

std::vector<Slice> intersect(const MeshLayout& src, const MeshLayout& dst) {
  std::vector<Slice> out;
  const size_t rank = dst.shape.size();
  for (size_t a = 0; a < dst.tiles.size(); ++a) {
    const Tile& dt = dst.tiles[a];
    for (size_t b = 0; b < src.tiles.size(); ++b) {
      const Tile& st = src.tiles[b];
      Slice s;
      s.dst_tile = static_cast<int>(a);
      s.src_tile = static_cast<int>(b);
      s.lo.resize(rank);
      s.hi.resize(rank);
      bool empty = false;
      for (size_t d = 0; d < rank && !empty; ++d) {
        s.lo[d] = std::max(dt.lo[d], st.lo[d]);
        s.hi[d] = std::min(dt.hi[d], st.hi[d]);
        empty = s.hi[d] <= s.lo[d];
      }
      if (empty) continue;
      double elements = 1;
      s.src_offset.resize(rank);
      s.dst_offset.resize(rank);
      for (size_t d = 0; d < rank; ++d) {
        elements *= static_cast<double>(s.hi[d] - s.lo[d]);
        s.src_offset[d] = s.lo[d] - st.lo[d];
        s.dst_offset[d] = s.lo[d] - dt.lo[d];
      }
      s.bytes = elements * dst.element_bytes;
      out.push_back(std::move(s));
    }
  }
  return out;
}

}  // namespace hetsim
