// File: kernels_profile/cuda/interference.cu
// hetsim-interference: how much a GEMM slows down while a collective's kernel runs beside it on
// the same GPU, and how much the collective's kernel slows down in turn.
//
// On a one-GPU machine there is no peer to talk to, so the collective is stood in for by a kernel
// shaped like NCCL's reduction kernels: one thread block of 512 threads per channel (NCCL's
// default NCCL_NTHREADS), each block looping over its own slice of bf16 data, reading two
// operands and writing their sum (a ring reduce-scatter step: local data + received data -> send
// buffer), 128-bit loads and stores. `--channels k` blocks occupy k SMs: a cuBLAS Hopper GEMM
// tile needs a whole SM's shared memory, so it cannot share an SM with such a block (as with
// NCCL's kernels, whose blocks also take shared memory).
//
// Two experiments per GEMM shape and channel count, each the median of 5 tries:
//   gemm_slowdown   the reduction kernel is started first (the GEMM stream waits until all k blocks
//                   are resident), then R GEMMs run back to back, all inside the reduction
//                   kernel's lifetime (checked with events; the reduction is lengthened if not);
//                   slowdown = time per GEMM / time per GEMM alone.
//   reduce_slowdown the reduction kernel runs entirely while GEMMs run back to back beside it
//                   (started after the first GEMM and checked to end before the last);
//                   slowdown = its duration / its duration alone.
// GEMMs are bf16, in the layout frameworks use for a forward pass (y = x W^T: cuBLAS op(A) = T).
//
// Usage: hetsim-interference --device H100-SXM5-80GB --out interference.csv [--quick 1]
// Appends rows: device,dtype,m,n,k,channels,gemm_alone_s,gemm_with_s,gemm_slowdown,
//               reduce_alone_s,reduce_with_s,reduce_slowdown,reduce_gbps_alone,gpu,driver,
//               clock_mhz,date,library
#include <cuda_bf16.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "bench_util.cuh"

namespace {

using hetsim::cuda::identify;
using hetsim::cuda::median_seconds;
using hetsim::cuda::TimingPlan;

constexpr int kThreads = 512;                          // NCCL_NTHREADS default
constexpr size_t kSliceBytes = size_t{8} << 20;        // per block and operand: beyond L2 once k >= 4
constexpr size_t kSliceVectors = kSliceBytes / sizeof(uint4);

__global__ void reduce_copy(const uint4* __restrict__ a, const uint4* __restrict__ b, uint4* __restrict__ out,
                            int passes, unsigned long long* resident) {
  if (threadIdx.x == 0) atomicAdd(resident, 1);
  const size_t base = static_cast<size_t>(blockIdx.x) * kSliceVectors;
  for (int p = 0; p < passes; ++p) {
    for (size_t i = threadIdx.x; i < kSliceVectors; i += blockDim.x) {
      const uint4 x = a[base + i];
      const uint4 y = b[base + i];
      uint4 z;
      const auto* xs = reinterpret_cast<const __nv_bfloat162*>(&x);
      const auto* ys = reinterpret_cast<const __nv_bfloat162*>(&y);
      auto* zs = reinterpret_cast<__nv_bfloat162*>(&z);
#pragma unroll
      for (int j = 0; j < 4; ++j) zs[j] = __hadd2(xs[j], ys[j]);
      out[base + i] = z;
    }
  }
}

// One thread waits until `want` reduction blocks have started: the GEMM stream cannot get ahead
// of the reduction kernel's blocks and take their SMs first.
// The counter only grows (never reset: a reset on the other stream could land after the wait).
__global__ void wait_resident(unsigned long long* resident, unsigned long long want) {
  while (atomicAdd(resident, 0ULL) < want) {
  }
}

struct Shape {
  int m, n, k;
};

struct Bench {
  cudaStream_t main_stream{}, side{};
  cublasHandle_t blas{};
  __nv_bfloat16 *x{}, *w{}, *y{};
  uint4 *a{}, *b{}, *out{};
  unsigned long long* resident{};
  mutable unsigned long long launched = 0;  // reduction blocks launched so far
  int max_channels = 32;

  void gemm(const Shape& s) const {
    const float one = 1.0f, zero = 0.0f;
    // Row-major y[m x n] = x[m x k] . w[n x k]^T is column-major y^T = w . x^T: op(A) = T on w.
    HETSIM_CUBLAS(cublasGemmEx(blas, CUBLAS_OP_T, CUBLAS_OP_N, s.n, s.m, s.k, &one, w, CUDA_R_16BF, s.k, x,
                               CUDA_R_16BF, s.k, &zero, y, CUDA_R_16BF, s.n, CUBLAS_COMPUTE_32F,
                               CUBLAS_GEMM_DEFAULT));
  }

  void launch_reduce(int channels, int passes) const {
    launched += static_cast<unsigned long long>(channels);
    reduce_copy<<<channels, kThreads, 0, side>>>(a, b, out, passes, resident);
    HETSIM_CUDA(cudaGetLastError());
  }

  // Seconds of one reduction kernel of `passes` over `channels` slices, alone.
  double reduce_alone(int channels, int passes) const {
    TimingPlan plan{2, 5, 1};
    return median_seconds(side, plan, [&] { launch_reduce(channels, passes); });
  }
};

double elapsed(cudaEvent_t from, cudaEvent_t to) {
  float ms = 0;
  HETSIM_CUDA(cudaEventElapsedTime(&ms, from, to));
  return 1e-3 * ms;
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Time per GEMM while `channels` reduction blocks run beside it (experiment 1 above).
double gemm_with(const Bench& bench, const Shape& s, int channels, double gemm_alone, double pass_seconds) {
  const int reps = std::max(3, static_cast<int>(0.02 / gemm_alone));  // about 20 ms of GEMMs
  double window = 3.0 * reps * gemm_alone;                            // slowdown up to 3x before retrying
  cudaEvent_t start, stop, reduce_end;
  HETSIM_CUDA(cudaEventCreate(&start));
  HETSIM_CUDA(cudaEventCreate(&stop));
  HETSIM_CUDA(cudaEventCreate(&reduce_end));
  std::vector<double> tries;
  for (int attempt = 0; tries.size() < 5 && attempt < 20; ++attempt) {
    const int passes = std::max(1, static_cast<int>(window / pass_seconds) + 1);
    bench.launch_reduce(channels, passes);
    HETSIM_CUDA(cudaEventRecord(reduce_end, bench.side));
    wait_resident<<<1, 1, 0, bench.main_stream>>>(bench.resident, bench.launched);
    HETSIM_CUDA(cudaEventRecord(start, bench.main_stream));
    for (int r = 0; r < reps; ++r) bench.gemm(s);
    HETSIM_CUDA(cudaEventRecord(stop, bench.main_stream));
    HETSIM_CUDA(cudaDeviceSynchronize());
    if (elapsed(stop, reduce_end) <= 0) {  // the GEMMs outlived the reduction: lengthen it, retry
      window *= 2;
      continue;
    }
    tries.push_back(elapsed(start, stop) / reps);
  }
  HETSIM_CUDA(cudaEventDestroy(start));
  HETSIM_CUDA(cudaEventDestroy(stop));
  HETSIM_CUDA(cudaEventDestroy(reduce_end));
  return tries.empty() ? -1 : median_of(tries);
}

// Duration of one reduction kernel that runs entirely beside GEMMs (experiment 2 above).
double reduce_with(const Bench& bench, const Shape& s, int channels, int passes, double reduce_alone, double gemm_alone) {
  double window = 3.0 * reduce_alone;
  cudaEvent_t first_done, gemms_done, r_start, r_end;
  for (cudaEvent_t* e : {&first_done, &gemms_done, &r_start, &r_end}) HETSIM_CUDA(cudaEventCreate(e));
  std::vector<double> tries;
  for (int attempt = 0; tries.size() < 5 && attempt < 20; ++attempt) {
    const int reps = 2 + static_cast<int>(window / gemm_alone);
    bench.gemm(s);
    HETSIM_CUDA(cudaEventRecord(first_done, bench.main_stream));
    for (int r = 1; r < reps; ++r) bench.gemm(s);
    HETSIM_CUDA(cudaEventRecord(gemms_done, bench.main_stream));
    // Start the reduction once the GEMM stream is busy: after the first GEMM's launch, on the host;
    // its start event tells whether it really began after the first GEMM ended (GEMMs then hold
    // the SMs it needs, as a collective launched during compute finds them).
    HETSIM_CUDA(cudaStreamWaitEvent(bench.side, first_done, 0));
    HETSIM_CUDA(cudaEventRecord(r_start, bench.side));
    bench.launch_reduce(channels, passes);
    HETSIM_CUDA(cudaEventRecord(r_end, bench.side));
    HETSIM_CUDA(cudaDeviceSynchronize());
    if (elapsed(r_end, gemms_done) <= 0) {  // the reduction outlived the GEMMs: more GEMMs, retry
      window *= 2;
      continue;
    }
    tries.push_back(elapsed(r_start, r_end));
  }
  for (cudaEvent_t e : {first_done, gemms_done, r_start, r_end}) HETSIM_CUDA(cudaEventDestroy(e));
  return tries.empty() ? -1 : median_of(tries);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string device = hetsim::cuda::arg(argc, argv, "--device", "");
  const std::string out_path = hetsim::cuda::arg(argc, argv, "--out", "");
  const bool quick = hetsim::cuda::arg(argc, argv, "--quick", "0") == "1";
  if (device.empty() || out_path.empty()) {
    std::fprintf(stderr, "usage: hetsim-interference --device NAME --out FILE.csv [--quick 1]\n");
    return 2;
  }
  // Shapes: a square 8192 GEMM, and the MLP GEMMs of a 4096-wide layer at 4096 tokens (up, down).
  std::vector<Shape> shapes{{8192, 8192, 8192}, {4096, 16384, 4096}, {4096, 4096, 16384}, {4096, 4096, 4096}};
  std::vector<int> channel_counts{4, 8, 16, 24, 32};
  if (quick) {
    shapes.resize(1);
    channel_counts = {8, 32};
  }
  Bench bench;
  HETSIM_CUDA(cudaStreamCreateWithFlags(&bench.main_stream, cudaStreamNonBlocking));
  HETSIM_CUDA(cudaStreamCreateWithFlags(&bench.side, cudaStreamNonBlocking));
  HETSIM_CUBLAS(cublasCreate(&bench.blas));
  HETSIM_CUBLAS(cublasSetStream(bench.blas, bench.main_stream));
  int blas_version = 0;
  HETSIM_CUBLAS(cublasGetVersion(bench.blas, &blas_version));
  const std::string library = "cuBLAS " + std::to_string(blas_version);
  size_t max_elems = 0;
  for (const Shape& s : shapes) {
    max_elems = std::max({max_elems, size_t(s.m) * s.k, size_t(s.n) * s.k, size_t(s.m) * s.n});
  }
  HETSIM_CUDA(cudaMalloc(&bench.x, max_elems * sizeof(__nv_bfloat16)));
  HETSIM_CUDA(cudaMalloc(&bench.w, max_elems * sizeof(__nv_bfloat16)));
  HETSIM_CUDA(cudaMalloc(&bench.y, max_elems * sizeof(__nv_bfloat16)));
  const size_t reduce_bytes = kSliceBytes * bench.max_channels;
  HETSIM_CUDA(cudaMalloc(&bench.a, reduce_bytes));
  HETSIM_CUDA(cudaMalloc(&bench.b, reduce_bytes));
  HETSIM_CUDA(cudaMalloc(&bench.out, reduce_bytes));
  HETSIM_CUDA(cudaMalloc(&bench.resident, sizeof(unsigned long long)));
  HETSIM_CUDA(cudaMemset(bench.resident, 0, sizeof(unsigned long long)));
  // Small finite values everywhere: every bf16 is 0x3c3c (about 0.0115).
  HETSIM_CUDA(cudaMemset(bench.x, 0x3c, max_elems * sizeof(__nv_bfloat16)));
  HETSIM_CUDA(cudaMemset(bench.w, 0x3c, max_elems * sizeof(__nv_bfloat16)));
  HETSIM_CUDA(cudaMemset(bench.a, 0x3c, reduce_bytes));
  HETSIM_CUDA(cudaMemset(bench.b, 0x3c, reduce_bytes));
  const hetsim::cuda::GpuIdentity id = identify(0);
  std::FILE* out = std::fopen(out_path.c_str(), "a");
  if (!out) {
    std::fprintf(stderr, "hetsim-interference: cannot open %s\n", out_path.c_str());
    return 1;
  }
  std::fseek(out, 0, SEEK_END);
  if (std::ftell(out) == 0) {
    std::fprintf(out,
                 "device,dtype,m,n,k,channels,gemm_alone_s,gemm_with_s,gemm_slowdown,reduce_alone_s,reduce_with_s,"
                 "reduce_slowdown,reduce_gbps_alone,gpu,driver,clock_mhz,date,library\n");
  }
  for (const Shape& s : shapes) {
    const double gemm_alone = median_seconds(bench.main_stream, TimingPlan{}, [&] { bench.gemm(s); });
    for (const int channels : channel_counts) {
      const double one_pass = bench.reduce_alone(channels, 4) / 4;
      // The reduction alone for experiment 2: about 2 GEMMs long, at least one pass.
      const int passes = std::max(1, static_cast<int>(2 * gemm_alone / one_pass));
      const double r_alone = bench.reduce_alone(channels, passes);
      const double g_with = gemm_with(bench, s, channels, gemm_alone, one_pass);
      const double r_with = reduce_with(bench, s, channels, passes, r_alone, gemm_alone);
      const double gbps = 3.0 * kSliceBytes * channels * passes / r_alone / 1e9;
      if (g_with <= 0 || r_with <= 0) {
        std::fprintf(stderr, "hetsim-interference: %dx%dx%d with %d channels: could not nest the runs; skipped\n",
                     s.m, s.n, s.k, channels);
        continue;
      }
      std::fprintf(out, "%s,bf16,%d,%d,%d,%d,%.9g,%.9g,%.6g,%.9g,%.9g,%.6g,%.6g,\"%s\",\"%s\",%d,%s,\"%s\"\n",
                   device.c_str(), s.m, s.n, s.k, channels, gemm_alone, g_with, g_with / gemm_alone, r_alone, r_with,
                   r_with / r_alone, gbps, id.name.c_str(), id.driver.c_str(), id.clock_mhz, id.date.c_str(),
                   library.c_str());
      std::fflush(out);
      std::printf("interference %5dx%5dx%5d bf16, %2d channels: GEMM %.3f ms -> %.3f ms (x%.3f); reduction "
                  "%.3f ms -> %.3f ms (x%.3f), %.0f GB/s alone\n",
                  s.m, s.n, s.k, channels, gemm_alone * 1e3, g_with * 1e3, g_with / gemm_alone, r_alone * 1e3,
                  r_with * 1e3, r_with / r_alone, gbps);
      std::fflush(stdout);
    }
  }
  std::fclose(out);
  return 0;
}
