// File: tests/planner/resharding/test_meshes.hpp
// Meshes and specs for the resharding tests.
#pragma once

#include <gtest/gtest.h>

#include "planner/resharding/mesh_layout.hpp"

namespace hetsim::test {

// hosts x gpus GPUs numbered consecutively from `first`, host by host.
inline Mesh consecutive_mesh(int hosts, int gpus, int first) {
  Mesh m{hosts, gpus, {}};
  for (int i = 0; i < hosts * gpus; ++i) m.devices.push_back(first + i);
  return m;
}

// A spec the test knows to be well formed ("S0,R,R").
inline ShardingSpec spec(const char* text) {
  ShardingSpec s;
  EXPECT_EQ(parse_sharding_spec(text, s), "") << text;
  return s;
}

}  // namespace hetsim::test
