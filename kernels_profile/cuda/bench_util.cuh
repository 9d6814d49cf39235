// File: kernels_profile/cuda/bench_util.cuh
// Shared by the CUDA measurement programs: error checks, CUDA-event timing (warm-up, repeats,
// median), the GPU's identity (name, driver, clock) and the UTC date for provenance columns.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <string>
#include <vector>

#define HETSIM_CUDA(call)                                                                             \
  do {                                                                                                \
    cudaError_t e_ = (call);                                                                          \
    if (e_ != cudaSuccess) {                                                                          \
      std::fprintf(stderr, "%s:%d: CUDA error: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_));    \
      std::exit(1);                                                                                   \
    }                                                                                                 \
  } while (0)

#define HETSIM_CUBLAS(call)                                                                   \
  do {                                                                                        \
    cublasStatus_t s_ = (call);                                                               \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                                        \
      std::fprintf(stderr, "%s:%d: cuBLAS error %d\n", __FILE__, __LINE__, static_cast<int>(s_)); \
      std::exit(1);                                                                           \
    }                                                                                         \
  } while (0)

namespace hetsim::cuda {

struct TimingPlan {
  int warmup = 5;
  int repeats = 20;
  int back_to_back = 10;  // launches per timed sample, at most (fewer for long work: see below)
};

// Median over `plan.repeats` samples of the time of one `work`, after `plan.warmup` untimed runs.
// Each sample brackets k launches in a row with CUDA events on `stream` and divides: the GPU never
// waits for the host to launch, as in a training step's stream (one launch timed alone also
// counts the host's launch latency, several microseconds). k = enough launches for 1 ms, between
// 1 and plan.back_to_back: work of a millisecond or more runs alone (latency < 1 %).
inline double median_seconds(cudaStream_t stream, const TimingPlan& plan, const std::function<void()>& work) {
  for (int i = 0; i < plan.warmup; ++i) work();
  HETSIM_CUDA(cudaStreamSynchronize(stream));
  cudaEvent_t start, stop;
  HETSIM_CUDA(cudaEventCreate(&start));
  HETSIM_CUDA(cudaEventCreate(&stop));
  float once = 0;
  HETSIM_CUDA(cudaEventRecord(start, stream));
  work();
  HETSIM_CUDA(cudaEventRecord(stop, stream));
  HETSIM_CUDA(cudaEventSynchronize(stop));
  HETSIM_CUDA(cudaEventElapsedTime(&once, start, stop));
  const int k = std::clamp(static_cast<int>(1.0f / std::max(once, 1e-4f)) + 1, 1, plan.back_to_back);
  std::vector<float> ms(plan.repeats);
  for (int i = 0; i < plan.repeats; ++i) {
    HETSIM_CUDA(cudaEventRecord(start, stream));
    for (int j = 0; j < k; ++j) work();
    HETSIM_CUDA(cudaEventRecord(stop, stream));
    HETSIM_CUDA(cudaEventSynchronize(stop));
    HETSIM_CUDA(cudaEventElapsedTime(&ms[i], start, stop));
    ms[i] /= static_cast<float>(k);
  }
  HETSIM_CUDA(cudaEventDestroy(start));
  HETSIM_CUDA(cudaEventDestroy(stop));
  std::sort(ms.begin(), ms.end());
  return 1e-3 * ms[ms.size() / 2];
}

struct GpuIdentity {
  std::string name;
  std::string driver;
  int clock_mhz = 0;
  std::string date;  // UTC, ISO 8601
};

inline GpuIdentity identify(int device) {
  GpuIdentity id;
  cudaDeviceProp p{};
  HETSIM_CUDA(cudaGetDeviceProperties(&p, device));
  id.name = p.name;
  int driver = 0;
  HETSIM_CUDA(cudaDriverGetVersion(&driver));
  id.driver = "CUDA driver " + std::to_string(driver / 1000) + "." + std::to_string((driver % 1000) / 10);
  int khz = 0;
  HETSIM_CUDA(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, device));
  id.clock_mhz = khz / 1000;
  const std::time_t now = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  id.date = buf;
  return id;
}

// Returns the value following `flag` in argv, or `fallback`.
inline std::string arg(int argc, char** argv, const std::string& flag, const std::string& fallback) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (flag == argv[i]) return argv[i + 1];
  }
  return fallback;
}

}  // namespace hetsim::cuda
