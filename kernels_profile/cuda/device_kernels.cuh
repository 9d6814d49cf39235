// File: kernels_profile/cuda/device_kernels.cuh
// The non-GEMM kernels of a transformer layer, written plainly (one block per row for row-wise
// kernels, grid-stride loops for elementwise ones) and templated on the storage type (float,
// __half, __nv_bfloat16); arithmetic in fp32. Also the cuBLAS GEMM launcher for row-major data.
#pragma once

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <string>

namespace hetsim::cuda {

enum class Dtype { kFp32, kTf32, kFp16, kBf16 };
Dtype dtype_from(const std::string& name);  // exits on an unknown name
const char* dtype_name(Dtype d);
size_t dtype_size(Dtype d);

// C[batch][m x n] = A[batch][m x k] . B[batch][k x n], row-major, accumulate in fp32.
void gemm(cublasHandle_t h, Dtype t, int batch, int m, int n, int k, const void* a, const void* b, void* c);

// Row-wise and elementwise kernels on `stream`; buffers hold elements of type `t`
// (tf32 is stored as fp32). Statistics and gradient accumulators are fp32.
void layernorm_fwd(Dtype t, const void* x, const float* gamma, const float* beta, void* y, float* mean, float* rstd,
                   int rows, int cols, cudaStream_t s);
void layernorm_bwd(Dtype t, const void* dy, const void* x, const float* gamma, const float* mean, const float* rstd,
                   void* dx, float* dgamma, float* dbeta, int rows, int cols, cudaStream_t s);
void softmax_fwd(Dtype t, const void* x, void* y, long rows, int cols, cudaStream_t s);
void softmax_bwd(Dtype t, const void* y, const void* dy, void* dx, long rows, int cols, cudaStream_t s);
void gelu_fwd(Dtype t, const void* x, void* y, long n, cudaStream_t s);
void gelu_bwd(Dtype t, const void* x, const void* dy, void* dx, long n, cudaStream_t s);
void add(Dtype t, const void* a, const void* b, void* y, long n, cudaStream_t s);
void embedding_fwd(Dtype t, const int* ids, const void* table, void* out, int tokens, int hidden, cudaStream_t s);
void embedding_bwd(Dtype t, const int* ids, const void* dout, float* dtable, int tokens, int hidden, cudaStream_t s);
void fill_random(Dtype t, void* p, long n, unsigned seed, cudaStream_t s);

}  // namespace hetsim::cuda
