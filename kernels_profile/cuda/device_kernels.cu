// File: kernels_profile/cuda/device_kernels.cu
#include "device_kernels.cuh"

#include <cstdio>
#include <cstdlib>

#include "bench_util.cuh"

namespace hetsim::cuda {

namespace {

__device__ inline float ld(const float* p, long i) { return p[i]; }
__device__ inline float ld(const __half* p, long i) { return __half2float(p[i]); }
__device__ inline float ld(const __nv_bfloat16* p, long i) { return __bfloat162float(p[i]); }
__device__ inline void st(float* p, long i, float v) { p[i] = v; }
__device__ inline void st(__half* p, long i, float v) { p[i] = __float2half(v); }
__device__ inline void st(__nv_bfloat16* p, long i, float v) { p[i] = __float2bfloat16(v); }

constexpr int kThreads = 256;

// Sum over the block; every thread gets the result.
__device__ float block_sum(float v) {
  __shared__ float buf[32];
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  __syncthreads();
  if (lane == 0) buf[warp] = v;
  __syncthreads();
  float total = 0;
  for (int w = 0; w < (blockDim.x + 31) / 32; ++w) total += buf[w];
  return total;
}

__device__ float block_max(float v) {
  __shared__ float buf[32];
  for (int o = 16; o > 0; o /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  __syncthreads();
  if (lane == 0) buf[warp] = v;
  __syncthreads();
  float m = -3.0e38f;
  for (int w = 0; w < (blockDim.x + 31) / 32; ++w) m = fmaxf(m, buf[w]);
  return m;
}

template <class T>
__global__ void k_layernorm_fwd(const T* x, const float* g, const float* b, T* y, float* mean, float* rstd, int cols) {
  const long row = blockIdx.x;
  const T* xr = x + row * cols;
  float s = 0, s2 = 0;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) {
    const float v = ld(xr, c);
    s += v;
    s2 += v * v;
  }
  s = block_sum(s);
  s2 = block_sum(s2);
  const float mu = s / cols, r = rsqrtf(s2 / cols - mu * mu + 1e-5f);
  for (int c = threadIdx.x; c < cols; c += blockDim.x) st(y + row * cols, c, (ld(xr, c) - mu) * r * g[c] + b[c]);
  if (threadIdx.x == 0) {
    mean[row] = mu;
    rstd[row] = r;
  }
}

template <class T>
__global__ void k_layernorm_bwd(const T* dy, const T* x, const float* g, const float* mean, const float* rstd, T* dx,
                                float* dg, float* db, int cols) {
  const long row = blockIdx.x;
  const float mu = mean[row], r = rstd[row];
  float a = 0, b = 0;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) {
    const float xh = (ld(x + row * cols, c) - mu) * r, d = ld(dy + row * cols, c) * g[c];
    a += d;
    b += d * xh;
    atomicAdd(&dg[c], ld(dy + row * cols, c) * xh);
    atomicAdd(&db[c], ld(dy + row * cols, c));
  }
  a = block_sum(a) / cols;
  b = block_sum(b) / cols;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) {
    const float xh = (ld(x + row * cols, c) - mu) * r, d = ld(dy + row * cols, c) * g[c];
    st(dx + row * cols, c, r * (d - a - xh * b));
  }
}

template <class T>
__global__ void k_softmax_fwd(const T* x, T* y, int cols) {
  const long row = blockIdx.x;
  float m = -3.0e38f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, ld(x + row * cols, c));
  m = block_max(m);
  float s = 0;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) s += __expf(ld(x + row * cols, c) - m);
  s = block_sum(s);
  for (int c = threadIdx.x; c < cols; c += blockDim.x) st(y + row * cols, c, __expf(ld(x + row * cols, c) - m) / s);
}

template <class T>
__global__ void k_softmax_bwd(const T* y, const T* dy, T* dx, int cols) {
  const long row = blockIdx.x;
  float dot = 0;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) dot += ld(y + row * cols, c) * ld(dy + row * cols, c);
  dot = block_sum(dot);
  for (int c = threadIdx.x; c < cols; c += blockDim.x) {
    st(dx + row * cols, c, ld(y + row * cols, c) * (ld(dy + row * cols, c) - dot));
  }
}

__device__ inline float gelu(float v) { return 0.5f * v * (1.f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v))); }

template <class T>
__global__ void k_gelu_fwd(const T* x, T* y, long n) {
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) st(y, i, gelu(ld(x, i)));
}

template <class T>
__global__ void k_gelu_bwd(const T* x, const T* dy, T* dx, long n) {
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
    const float v = ld(x, i);
    const float t = tanhf(0.7978845608f * (v + 0.044715f * v * v * v));
    const float dt = (1 - t * t) * 0.7978845608f * (1 + 3 * 0.044715f * v * v);
    st(dx, i, ld(dy, i) * (0.5f * (1 + t) + 0.5f * v * dt));
  }
}

template <class T>
__global__ void k_add(const T* a, const T* b, T* y, long n) {
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) st(y, i, ld(a, i) + ld(b, i));
}

template <class T>
__global__ void k_embedding_fwd(const int* ids, const T* table, T* out, int hidden) {
  const long t = blockIdx.x;
  for (int c = threadIdx.x; c < hidden; c += blockDim.x) st(out + t * hidden, c, ld(table + (long)ids[t] * hidden, c));
}

template <class T>
__global__ void k_embedding_bwd(const int* ids, const T* dout, float* dtable, int hidden) {
  const long t = blockIdx.x;
  for (int c = threadIdx.x; c < hidden; c += blockDim.x) atomicAdd(&dtable[(long)ids[t] * hidden + c], ld(dout + t * hidden, c));
}

template <class T>
__global__ void k_fill(T* p, long n, unsigned seed) {
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
    unsigned h = static_cast<unsigned>(i) * 2654435761u ^ seed;
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    st(p, i, (static_cast<float>(h & 0xffff) / 65535.f - 0.5f) * 0.1f);
  }
}

int grid_for(long n) { return static_cast<int>(std::min<long>((n + kThreads - 1) / kThreads, 65535L * 8)); }

// Calls f(T*) with the storage type of `t`.
template <class F>
void dispatch(Dtype t, F&& f) {
  switch (t) {
    case Dtype::kFp32:
    case Dtype::kTf32: f(static_cast<float*>(nullptr)); break;
    case Dtype::kFp16: f(static_cast<__half*>(nullptr)); break;
    case Dtype::kBf16: f(static_cast<__nv_bfloat16*>(nullptr)); break;
  }
}

}  // namespace

Dtype dtype_from(const std::string& n) {
  if (n == "fp32") return Dtype::kFp32;
  if (n == "tf32") return Dtype::kTf32;
  if (n == "fp16") return Dtype::kFp16;
  if (n == "bf16") return Dtype::kBf16;
  std::fprintf(stderr, "unknown dtype %s (fp32, tf32, fp16, bf16)\n", n.c_str());
  std::exit(2);
}

const char* dtype_name(Dtype d) {
  switch (d) {
    case Dtype::kFp32: return "fp32";
    case Dtype::kTf32: return "tf32";
    case Dtype::kFp16: return "fp16";
    case Dtype::kBf16: return "bf16";
  }
  return "?";
}

size_t dtype_size(Dtype d) { return d == Dtype::kFp16 || d == Dtype::kBf16 ? 2 : 4; }

void gemm(cublasHandle_t h, Dtype t, int batch, int m, int n, int k, const void* a, const void* b, void* c) {
  // Row-major C = A.B is column-major C^T = B^T.A^T: swap the operands.
  const float one = 1.f, zero = 0.f;
  cudaDataType_t type = CUDA_R_32F;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  if (t == Dtype::kFp16) type = CUDA_R_16F;
  if (t == Dtype::kBf16) type = CUDA_R_16BF;
  if (t == Dtype::kTf32) compute = CUBLAS_COMPUTE_32F_FAST_TF32;
  HETSIM_CUBLAS(cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, b, type, n,
                                           static_cast<long long>(k) * n, a, type, k, static_cast<long long>(m) * k, &zero,
                                           c, type, n, static_cast<long long>(m) * n, batch, compute, CUBLAS_GEMM_DEFAULT));
}

void layernorm_fwd(Dtype t, const void* x, const float* g, const float* b, void* y, float* mean, float* rstd, int rows,
                   int cols, cudaStream_t s) {
  dispatch(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    k_layernorm_fwd<T><<<rows, kThreads, 0, s>>>(static_cast<const T*>(x), g, b, static_cast<T*>(y), mean, rstd, cols);
  });
}

void layernorm_bwd(Dtype t, const void* dy, const void* x, const float* g, const float* mean, const float* rstd, void* dx,
                   float* dg, float* db, int rows, int cols, cudaStream_t s) {
  dispatch(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    k_layernorm_bwd<T><<<rows, kThreads, 0, s>>>(static_cast<const T*>(dy), static_cast<const T*>(x), g, mean, rstd,
                                                 static_cast<T*>(dx), dg, db, cols);
  });
}

void softmax_fwd(Dtype t, const void* x, void* y, long rows, int cols, cudaStream_t s) {
  dispatch(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    k_softmax_fwd<T><<<static_cast<unsigned>(rows), kThreads, 0, s>>>(static_cast<const T*>(x), static_cast<T*>(y), cols);
  });
}

void softmax_bwd(Dtype t, const void* y, const void* dy, void* dx, long rows, int cols, cudaStream_t s) {
  dispatch(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    k_softmax_bwd<T><<<static_cast<unsigned>(rows), kThreads, 0, s>>>(static_cast<const T*>(y), static_cast<const T*>(dy),
                                                                     static_cast<T*>(dx), cols);
  });
}

void gelu_fwd(Dtype t, const void* x, void* y, long n, cudaStream_t s) {
  dispatch(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    k_gelu_fwd<T><<<grid_for(n), kThreads, 0, s>>>(static_cast<const T*>(x), static_cast<T*>(y), n);
  });
}

void gelu_bwd(Dtype t, const void* x, const void* dy, void* dx, long n, cudaStream_t s) {
  dispatch(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    k_gelu_bwd<T><<<grid_for(n), kThreads, 0, s>>>(static_cast<const T*>(x), static_cast<const T*>(dy), static_cast<T*>(dx), n);
  });
}

void add(Dtype t, const void* a, const void* b, void* y, long n, cudaStream_t s) {
  dispatch(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    k_add<T><<<grid_for(n), kThreads, 0, s>>>(static_cast<const T*>(a), static_cast<const T*>(b), static_cast<T*>(y), n);
  });
}

void embedding_fwd(Dtype t, const int* ids, const void* table, void* out, int tokens, int hidden, cudaStream_t s) {
  dispatch(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    k_embedding_fwd<T><<<tokens, kThreads, 0, s>>>(ids, static_cast<const T*>(table), static_cast<T*>(out), hidden);
  });
}

void embedding_bwd(Dtype t, const int* ids, const void* dout, float* dtable, int tokens, int hidden, cudaStream_t s) {
  dispatch(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    k_embedding_bwd<T><<<tokens, kThreads, 0, s>>>(ids, static_cast<const T*>(dout), dtable, hidden);
  });
}

void fill_random(Dtype t, void* p, long n, unsigned seed, cudaStream_t s) {
  dispatch(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    k_fill<T><<<grid_for(n), kThreads, 0, s>>>(static_cast<T*>(p), n, seed);
  });
}

}  // namespace hetsim::cuda
