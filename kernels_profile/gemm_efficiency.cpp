// File: kernels_profile/gemm_efficiency.cpp
#include "kernels_profile/gemm_efficiency.hpp"

#include <algorithm>
#include <cmath>

namespace hetsim {

namespace {

double ceil_div(double a, double b) { return std::ceil(a / b); }

// One kernel configuration: output tile tm x tn, K split over `split` thread blocks.
double config_factor(double m, double n, double k, double batch, double tm, double tn, double split, double units,
                     double k_half) {
  const double tiles_m = ceil_div(m, tm), tiles_n = ceil_div(n, tn);
  const double tiles = batch * tiles_m * tiles_n * split;
  const double waves = ceil_div(tiles, units);
  const double wave = tiles / (waves * units);                     // idle units in the last wave
  const double padding = (m * n) / (tiles_m * tm * tiles_n * tn);  // edge tiles compute padding
  const double depth = (k / split) / (k / split + k_half);          // tile prologue/epilogue over the K loop
  return wave * padding * depth;
}

}  // namespace

GemmCores gemm_cores(DType t) { return t == DType::kFp32 ? GemmCores::kSimt : GemmCores::kTensor; }

double gemm_shape_factor(const GemmModel& g, const GemmShape& shape, GemmCores cores) {
  const double m = static_cast<double>(std::max(1L, shape.m)), n = static_cast<double>(std::max(1L, shape.n));
  const double k = static_cast<double>(std::max(1L, shape.k)), batch = static_cast<double>(std::max(1L, shape.batch));
  const double tm = static_cast<double>(std::max(1L, g.tile_m)), tn = static_cast<double>(std::max(1L, g.tile_n));
  const double units = static_cast<double>(std::max(1L, g.compute_units));
  // Like a BLAS heuristic, the best of a few configurations: the stated tile, half its rows, half
  // both sides (smaller tiles reuse less data: kSmallerTile per halving, assumed), and split-K by 2
  // or 4 where each part keeps at least kMinSplitDepth of K (kSplitK for the reduction). The fixed
  // cost per tile: on the tensor cores the device file's k_half (the NVIDIA files' fitted on hetsim's
  // H100 bf16 table, GemmModel); on the SIMT cores, whose math is an order slower, kSimtKHalf (assumed; against
  // hetsim's H100 fp32 table: median +5.8 %, 90th percentile 12.7 %, scripts/check-shape-model).
  constexpr double kSmallerTile = 0.95, kSimtKHalf = 64, kSplitK = 0.97, kMinSplitDepth = 512;
  const double k_half = cores == GemmCores::kTensor ? std::max(0.0, g.k_half) : kSimtKHalf;
  double best = 0;
  const double tiles[3][3] = {{tm, tn, 1.0}, {std::max(1.0, tm / 2), tn, kSmallerTile},
                              {std::max(1.0, tm / 2), std::max(1.0, tn / 2), kSmallerTile * kSmallerTile}};
  for (const auto& t : tiles) {
    for (const double split : {1.0, 2.0, 4.0}) {
      if (split > 1 && k / split < kMinSplitDepth) break;
      const double penalty = t[2] * (split > 1 ? kSplitK : 1.0);
      best = std::max(best, penalty * config_factor(m, n, k, batch, t[0], t[1], split, units, k_half));
    }
  }
  return best;
}

double gemm_efficiency(const GemmModel& g, double efficiency, const GemmShape& shape, GemmCores cores) {
  if (g.compute_units <= 0) return efficiency;
  const double ref = gemm_shape_factor(g, g.reference, cores);
  return std::min(1.0, efficiency * gemm_shape_factor(g, shape, cores) / ref);
}

}  // namespace hetsim
