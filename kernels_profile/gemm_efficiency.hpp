// File: kernels_profile/gemm_efficiency.hpp
// How much of a device's matrix peak a GEMM of a given shape reaches: output tiles spread over the
// compute units in waves (a last, partly filled wave idles units), tiles padded at the matrix edge,
// and a per-tile prologue/epilogue amortised over the K loop (deeper on the tensor cores, whose
// math is faster), all relative to a reference shape where the device's
// efficiency.matmul holds (its "maximum achievable matmul FLOPS" shape where one is published). The
// memory roofline still bounds the result (cost_model.cpp).
#pragma once

#include "workloads/op_graph.hpp"

namespace hetsim {

// The figures of a device file's `matmul` block (kernels_profile/README.md). compute_units 0: no
// shape dependence (every GEMM at efficiency.matmul, hetsim's behaviour before this model).
struct GemmModel {
  long compute_units = 0;    // SMs (NVIDIA) or CUs (AMD) that run output tiles concurrently
  long tile_m = 128;         // output tile of one thread block, rows
  long tile_n = 128;         // output tile of one thread block, columns
  double k_half = 64;        // K depth at which the per-tile fixed cost halves a tensor-core GEMM's throughput
                             // (the NVIDIA files give 192, fitted on hetsim's H100 bf16 table:
                             // scripts/check-shape-model --fit; the AMD files 64, assumed)
  GemmShape reference{1, 8192, 8192, 8192};  // where `efficiency` (the device's efficiency.matmul) holds
  friend bool operator==(const GemmModel&, const GemmModel&) = default;
};

// Which units run the product: the tensor (matrix) cores, or the SIMT cores (fp32 GEMMs: cuBLAS and
// frameworks run them there unless TF32 is asked for, which is its own format, tf32).
enum class GemmCores { kTensor, kSimt };
[[nodiscard]] GemmCores gemm_cores(DType t);

// Shape factor in (0, 1]: (tiles / (waves x units)) x (useful / padded tile area) x k / (k + k_half),
// the best over a few kernel configurations a BLAS heuristic chooses from (the stated tile, half
// its rows, half both sides; split-K by 2 or 4 for deep products), each smaller tile or split
// paying a stated penalty; k_half is the model's for tensor-core GEMMs, a stated one for SIMT GEMMs
// (gemm_efficiency.cpp).
[[nodiscard]] double gemm_shape_factor(const GemmModel& g, const GemmShape& shape, GemmCores cores = GemmCores::kTensor);

// Fraction of the matrix peak a GEMM of `shape` reaches: `efficiency` x factor(shape) /
// factor(reference), at most 1. Without compute units: `efficiency`.
[[nodiscard]] double gemm_efficiency(const GemmModel& g, double efficiency, const GemmShape& shape,
                                     GemmCores cores = GemmCores::kTensor);

}  // namespace hetsim
