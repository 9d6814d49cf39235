// File: planner/spmd/sharding.hpp
// HAP's distributed instruction set on the flat list of all devices: every tensor is replicated,
// partial-sum, or split along one dimension with uneven per-device shares; every operator has a
// set of sharding rules (which input layouts it needs, which output layout it produces, where
// its parameters live); conversions between layouts are collectives, with their backward duals.
#pragma once

#include <string>
#include <vector>

#include "workloads/op_graph.hpp"

namespace hetsim {

enum class LayoutKind { kReplicated, kPartial, kSplit };

struct Layout {
  LayoutKind kind = LayoutKind::kReplicated;
  int dim = -1;  // kSplit only
  friend bool operator==(const Layout&, const Layout&) = default;
  friend auto operator<=>(const Layout&, const Layout&) = default;
};
[[nodiscard]] inline Layout replicated() { return {LayoutKind::kReplicated, -1}; }
[[nodiscard]] inline Layout partial() { return {LayoutKind::kPartial, -1}; }
[[nodiscard]] inline Layout split(int dim) { return {LayoutKind::kSplit, dim}; }
[[nodiscard]] std::string layout_name(const Layout& l);  // "R", "P", "S0", "S2"

enum class Comm { kNone, kAllGather, kReduceScatter, kAllReduce, kAllToAll };
[[nodiscard]] std::string_view comm_name(Comm c);

// Where an operator's parameters live: every device a copy (gradients synchronised when the data
// is split), a slice each (tensor/expert parallel), or a slice each gathered on use (ZeRO-3:
// all-gathered before forward and backward, gradients reduce-scattered).
enum class ParamPlacement { kNone, kReplicated, kSharded, kGathered };
// True when each device stores only its share of the parameters (and their optimizer state).
[[nodiscard]] inline bool stored_sharded(ParamPlacement p) { return p == ParamPlacement::kSharded || p == ParamPlacement::kGathered; }

// One way to run an operator.
struct Rule {
  std::string name;            // "data", "column", "row", "heads", "replicated"
  std::vector<Layout> inputs;  // required layout of each input, in Op::inputs order
  Layout output;
  bool sharded = false;        // compute and activations scale with the device's share
  ParamPlacement params = ParamPlacement::kNone;
  // Replicated parameters used on split data: their gradients are summed across devices
  // (all-reduce, or sufficient factor broadcasting for a linear layer).
  bool gradient_sync = false;
  Comm backward_comm = Comm::kNone;  // e.g. column-parallel: all-reduce of the input gradient
};

// The rules of `op` (never empty: every operator can run replicated).
[[nodiscard]] std::vector<Rule> rules_for(const Op& op);

// Converting a tensor from `from` to `to` for a consumer: the forward collective and the one its
// gradient needs in backward. possible = false when no conversion exists (nothing becomes a
// partial sum by communication).
struct Conversion {
  bool possible = true;
  Comm forward = Comm::kNone;
  Comm backward = Comm::kNone;
};
[[nodiscard]] Conversion convert(const Layout& from, const Layout& to);

}  // namespace hetsim
