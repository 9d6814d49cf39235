// File: kernels_profile/cuda/layer_bench.cu
// Times one GPT transformer layer's full kernel sequence, forward and backward, for a given
// hidden size, heads, sequence length, micro-batch and dtype — the same operators hetsim's
// operator graph has for the layer (pre-norm: LayerNorm, QKV, Q.K^T, softmax, P.V, output
// projection, residual, LayerNorm, MLP up, GELU, MLP down, residual). Appends one row to a CSV
// that `hetsim validate --layers FILE` compares with hetsim's prediction.
//
// Usage: hetsim-layer-bench --device H100-SXM5-80GB --hidden 4096 --heads 32 --seq 2048
//                           --micro-batch 1 --dtype bf16 --out layers.csv
#include <cstdio>

#include "bench_util.cuh"
#include "device_kernels.cuh"

using namespace hetsim::cuda;

int main(int argc, char** argv) {
  const std::string device = arg(argc, argv, "--device", "");
  const std::string out = arg(argc, argv, "--out", "");
  const long h = std::stol(arg(argc, argv, "--hidden", "4096"));
  const long heads = std::stol(arg(argc, argv, "--heads", "32"));
  const long s = std::stol(arg(argc, argv, "--seq", "2048"));
  const long b = std::stol(arg(argc, argv, "--micro-batch", "1"));
  const long f = std::stol(arg(argc, argv, "--ffn", std::to_string(4 * h)));
  const Dtype t = dtype_from(arg(argc, argv, "--dtype", "fp16"));
  if (device.empty() || out.empty() || h % heads != 0) {
    std::fprintf(stderr, "usage: hetsim-layer-bench --device NAME --out FILE.csv [--hidden H --heads A --seq S "
                         "--micro-batch B --ffn F --dtype fp16|bf16|tf32|fp32] (H divisible by A)\n");
    return 2;
  }
  const long T = b * s, d = h / heads, B = b * heads;
  const size_t e = dtype_size(t);
  cudaStream_t st;
  HETSIM_CUDA(cudaStreamCreate(&st));
  cublasHandle_t blas;
  HETSIM_CUBLAS(cublasCreate(&blas));
  HETSIM_CUBLAS(cublasSetStream(blas, st));
  auto buf = [&](long elems) {
    void* p = nullptr;
    HETSIM_CUDA(cudaMalloc(&p, elems * e));
    fill_random(t, p, elems, static_cast<unsigned>(elems), st);
    return p;
  };
  auto fbuf = [&](long n) {
    float* p = nullptr;
    HETSIM_CUDA(cudaMalloc(&p, n * 4));
    HETSIM_CUDA(cudaMemsetAsync(p, 0, n * 4, st));
    return p;
  };
  // Activations and weights.
  void *x = buf(T * h), *ln1 = buf(T * h), *qkv = buf(T * 3 * h), *q = buf(T * h), *k = buf(T * h), *v = buf(T * h);
  void *p = buf(B * s * s), *ctx = buf(T * h), *attn = buf(T * h), *r1 = buf(T * h), *ln2 = buf(T * h);
  void *up = buf(T * f), *act = buf(T * f), *down = buf(T * h), *r2 = buf(T * h);
  void *w_qkv = buf(h * 3 * h), *w_o = buf(h * h), *w_up = buf(h * f), *w_down = buf(f * h);
  float *g1 = fbuf(h), *b1 = fbuf(h), *g2 = fbuf(h), *b2 = fbuf(h), *m1 = fbuf(T), *s1 = fbuf(T), *m2 = fbuf(T), *s2 = fbuf(T);
  // Gradients.
  void *dr2 = buf(T * h), *dact = buf(T * f), *dup = buf(T * f), *dln2 = buf(T * h), *dr1 = buf(T * h), *dctx = buf(T * h);
  void *dp = buf(B * s * s), *dq = buf(T * h), *dk = buf(T * h), *dv = buf(T * h), *dqkv = buf(T * 3 * h), *dln1 = buf(T * h);
  void *dx = buf(T * h), *dw_qkv = buf(h * 3 * h), *dw_o = buf(h * h), *dw_up = buf(h * f), *dw_down = buf(f * h);
  float *dg = fbuf(h), *db = fbuf(h);

  const TimingPlan plan{5, 20};
  const double fwd = median_seconds(st, plan, [&] {
    layernorm_fwd(t, x, g1, b1, ln1, m1, s1, static_cast<int>(T), static_cast<int>(h), st);
    gemm(blas, t, 1, T, 3 * h, h, ln1, w_qkv, qkv);
    gemm(blas, t, B, s, s, d, q, k, p);  // Q.K^T per head
    softmax_fwd(t, p, p, B * s, static_cast<int>(s), st);
    gemm(blas, t, B, s, d, s, p, v, ctx);  // P.V per head
    gemm(blas, t, 1, T, h, h, ctx, w_o, attn);
    add(t, x, attn, r1, T * h, st);
    layernorm_fwd(t, r1, g2, b2, ln2, m2, s2, static_cast<int>(T), static_cast<int>(h), st);
    gemm(blas, t, 1, T, f, h, ln2, w_up, up);
    gelu_fwd(t, up, act, T * f, st);
    gemm(blas, t, 1, T, h, f, act, w_down, down);
    add(t, r1, down, r2, T * h, st);
  });
  const double bwd = median_seconds(st, plan, [&] {
    gemm(blas, t, 1, T, f, h, dr2, w_down, dact);   // MLP down: input and weight gradients
    gemm(blas, t, 1, f, h, T, act, dr2, dw_down);
    gelu_bwd(t, up, dact, dup, T * f, st);
    gemm(blas, t, 1, T, h, f, dup, w_up, dln2);     // MLP up
    gemm(blas, t, 1, h, f, T, ln2, dup, dw_up);
    layernorm_bwd(t, dln2, r1, g2, m2, s2, dr1, dg, db, static_cast<int>(T), static_cast<int>(h), st);
    add(t, dr1, dr2, dr1, T * h, st);                // residual
    gemm(blas, t, 1, T, h, h, dr1, w_o, dctx);       // output projection
    gemm(blas, t, 1, h, h, T, ctx, dr1, dw_o);
    gemm(blas, t, B, s, s, d, dctx, v, dp);          // dP = dO.V^T
    gemm(blas, t, B, s, d, s, p, dctx, dv);          // dV = P^T.dO
    softmax_bwd(t, p, dp, dp, B * s, static_cast<int>(s), st);
    gemm(blas, t, B, s, d, s, dp, k, dq);            // dQ = dS.K
    gemm(blas, t, B, s, d, s, dp, q, dk);            // dK = dS^T.Q
    gemm(blas, t, 1, T, h, 3 * h, dqkv, w_qkv, dln1);  // QKV
    gemm(blas, t, 1, h, 3 * h, T, ln1, dqkv, dw_qkv);
    layernorm_bwd(t, dln1, x, g1, m1, s1, dx, dg, db, static_cast<int>(T), static_cast<int>(h), st);
    add(t, dx, dr1, dx, T * h, st);                  // residual
  });
  const GpuIdentity id = identify(0);
  FILE* existing = std::fopen(out.c_str(), "r");
  const bool fresh = existing == nullptr;
  if (existing != nullptr) std::fclose(existing);
  FILE* o = std::fopen(out.c_str(), "a");
  if (o == nullptr) {
    std::fprintf(stderr, "%s: cannot write\n", out.c_str());
    return 2;
  }
  if (fresh) std::fprintf(o, "device,hidden,heads,ffn_hidden,seq_len,micro_batch,dtype,fwd_s,bwd_s,gpu,driver,clock_mhz,date\n");
  std::fprintf(o, "%s,%ld,%ld,%ld,%ld,%ld,%s,%.9g,%.9g,\"%s\",\"%s\",%d,%s\n", device.c_str(), h, heads, f, s, b,
               dtype_name(t), fwd, bwd, id.name.c_str(), id.driver.c_str(), id.clock_mhz, id.date.c_str());
  std::fclose(o);
  std::printf("layer h=%ld heads=%ld s=%ld b=%ld %s: forward %.3f ms, backward %.3f ms\n", h, heads, s, b, dtype_name(t),
              fwd * 1e3, bwd * 1e3);
  return 0;
}
