// File: kernels_profile/cuda/hetsim_kernels.cu
// Measures the kernels of transformer layers on the GPU it runs on and writes a kernel table
// (format in kernels_profile/README.md) that hetsim loads from kernels_profile/measured/:
//   gemm            cuBLAS (cublasGemmStridedBatchedEx) in fp32, tf32, fp16 and bf16 over the
//                   QKV / projection / MLP shapes of hidden sizes 1024-8192, forward and backward
//   attention_fwd   Q.K^T, softmax, P.V (batched cuBLAS + softmax kernel); attention_bwd the five
//                   kernels of its backward
//   layernorm, softmax, gelu, embedding (forward and backward), copy (device to device)
// Each entry: median of 20 samples (CUDA events around 10 launches back to back, divided by 10)
// after 5 warm-up runs.
//
// Usage: hetsim-kernels --device H100-SXM5-80GB --out kernels_profile/measured/h100.csv [--quick 1]
//        [--tokens 2048,8192 --dtypes fp16,bf16 --only gemm --append 1]   (more GEMM rows for a table)
//        (--device is the hetsim device name the rows are filed under)
#include <cstdio>
#include <set>
#include <tuple>

#include "bench_util.cuh"
#include "device_kernels.cuh"

using namespace hetsim::cuda;

namespace {

struct Ctx {
  cublasHandle_t blas;
  cudaStream_t stream;
  TimingPlan plan;
  GpuIdentity id;
  std::string device;
  FILE* out;
};

void row(Ctx& c, const char* kernel, Dtype t, long batch, long m, long n, long k, double bytes, double seconds) {
  auto field = [](long v) { return v > 0 ? std::to_string(v) : std::string(); };
  std::fprintf(c.out, "%s,%s,%s,%s,%s,%s,%s,%s,%.9g,\"%s\",\"%s\",%d,%s\n", c.device.c_str(), kernel, dtype_name(t),
               field(batch).c_str(), field(m).c_str(), field(n).c_str(), field(k).c_str(),
               bytes > 0 ? std::to_string(static_cast<long long>(bytes)).c_str() : "", seconds, c.id.name.c_str(),
               c.id.driver.c_str(), c.id.clock_mhz, c.id.date.c_str());
  std::fflush(c.out);
}

void* alloc(size_t bytes) {
  void* p = nullptr;
  HETSIM_CUDA(cudaMalloc(&p, bytes));
  return p;
}

std::vector<long> numbers(const std::string& list) {
  std::vector<long> out;
  size_t at = 0;
  while (at < list.size()) {
    size_t end = list.find(',', at);
    if (end == std::string::npos) end = list.size();
    out.push_back(std::stol(list.substr(at, end - at)));
    at = end + 1;
  }
  return out;
}

// `tokens` empty: the default token counts plus the square shapes.
void measure_gemms(Ctx& c, Dtype t, bool quick, const std::vector<long>& tokens_given) {
  std::set<std::tuple<long, long, long>> shapes;
  const std::vector<long> token_counts =
      !tokens_given.empty() ? tokens_given : quick ? std::vector<long>{4096} : std::vector<long>{1024, 2048, 4096, 8192, 16384};
  for (long h : quick ? std::vector<long>{2048} : std::vector<long>{1024, 2048, 4096, 8192}) {
    for (long tokens : token_counts) {
      // Forward (tokens x out x in) of QKV, output projection, MLP up and down, then the two
      // backward products of each: input gradient (m, k, n) and weight gradient (k, n, m); whole
      // and as the skinny shards of tensor parallelism (Megatron splits QKV and MLP up by columns,
      // the output projection and MLP down by rows).
      for (long tp : quick ? std::vector<long>{1} : std::vector<long>{1, 2, 8}) {
        for (const auto& [out, in] : {std::pair<long, long>{3 * h / tp, h}, {h, h / tp}, {4 * h / tp, h}, {h, 4 * h / tp}}) {
          shapes.insert({tokens, out, in});
          shapes.insert({tokens, in, out});
          shapes.insert({in, out, tokens});
        }
      }
    }
  }
  // Square products: the shapes of the published "maximum achievable matmul" sweeps.
  if (tokens_given.empty()) {
    for (long n : quick ? std::vector<long>{8192} : std::vector<long>{2048, 4096, 6144, 8192, 12288, 16384}) shapes.insert({n, n, n});
  }
  const size_t e = dtype_size(t);
  for (const auto& shape : shapes) {
    const long m = std::get<0>(shape), n = std::get<1>(shape), k = std::get<2>(shape);
    void* a = alloc(m * k * e);
    void* b = alloc(k * n * e);
    void* d = alloc(m * n * e);
    fill_random(t, a, m * k, 1, c.stream);
    fill_random(t, b, k * n, 2, c.stream);
    const double s = median_seconds(c.stream, c.plan, [&] { gemm(c.blas, t, 1, m, n, k, a, b, d); });
    row(c, "gemm", t, 1, m, n, k, 0, s);
    HETSIM_CUDA(cudaFree(a));
    HETSIM_CUDA(cudaFree(b));
    HETSIM_CUDA(cudaFree(d));
  }
}

void measure_attention(Ctx& c, Dtype t, bool quick) {
  const size_t e = dtype_size(t);
  for (long heads_batch : quick ? std::vector<long>{32} : std::vector<long>{16, 32, 64}) {
    for (long s : quick ? std::vector<long>{2048} : std::vector<long>{512, 1024, 2048, 4096}) {
      for (long d : {64L, 128L}) {
        const long qkv = heads_batch * s * d, scores = heads_batch * s * s;
        void *q = alloc(qkv * e), *k = alloc(qkv * e), *v = alloc(qkv * e), *o = alloc(qkv * e);
        void *p = alloc(scores * e), *dp = alloc(scores * e), *dq = alloc(qkv * e), *dk = alloc(qkv * e), *dv = alloc(qkv * e);
        for (void* x : {q, k, v, o}) fill_random(t, x, qkv, 3, c.stream);
        fill_random(t, p, scores, 4, c.stream);
        // K is used as K^T by passing it as the [d x s] operand: shapes match, layout does not matter for time.
        const double fwd = median_seconds(c.stream, c.plan, [&] {
          gemm(c.blas, t, heads_batch, s, s, d, q, k, p);
          softmax_fwd(t, p, p, heads_batch * s, s, c.stream);
          gemm(c.blas, t, heads_batch, s, d, s, p, v, o);
        });
        row(c, "attention_fwd", t, heads_batch, s, s, d, 0, fwd);
        const double bwd = median_seconds(c.stream, c.plan, [&] {
          gemm(c.blas, t, heads_batch, s, s, d, o, v, dp);   // dP = dO . V^T
          gemm(c.blas, t, heads_batch, s, d, s, p, o, dv);   // dV = P^T . dO
          softmax_bwd(t, p, dp, dp, heads_batch * s, s, c.stream);
          gemm(c.blas, t, heads_batch, s, d, s, dp, k, dq);  // dQ = dS . K
          gemm(c.blas, t, heads_batch, s, d, s, dp, q, dk);  // dK = dS^T . Q
        });
        row(c, "attention_bwd", t, heads_batch, s, s, d, 0, bwd);
        for (void* x : {q, k, v, o, p, dp, dq, dk, dv}) HETSIM_CUDA(cudaFree(x));
      }
    }
  }
}

// Memory-bound kernels; `bytes` follows hetsim's operator-graph accounting (kernels_profile/README.md).
void measure_memory_kernels(Ctx& c, Dtype t, bool quick) {
  const size_t e = dtype_size(t);
  const int hidden = 4096;
  for (long elems = 1L << 18; elems <= (1L << 28); elems <<= (quick ? 4 : 2)) {
    const int rows = static_cast<int>(elems / hidden);
    void *x = alloc(elems * e), *y = alloc(elems * e), *dy = alloc(elems * e), *dx = alloc(elems * e);
    float *g = static_cast<float*>(alloc(hidden * 4)), *b = static_cast<float*>(alloc(hidden * 4));
    float *mean = static_cast<float*>(alloc(rows * 4)), *rstd = static_cast<float*>(alloc(rows * 4));
    float *dg = static_cast<float*>(alloc(hidden * 4)), *db = static_cast<float*>(alloc(hidden * 4));
    fill_random(t, x, elems, 5, c.stream);
    fill_random(t, dy, elems, 6, c.stream);
    HETSIM_CUDA(cudaMemsetAsync(g, 0, hidden * 4, c.stream));
    HETSIM_CUDA(cudaMemsetAsync(b, 0, hidden * 4, c.stream));
    const double ebytes = static_cast<double>(elems) * e;
    const double params = 2.0 * hidden * e;
    row(c, "layernorm_fwd", t, 0, 0, 0, 0, 2 * ebytes + params,
        median_seconds(c.stream, c.plan, [&] { layernorm_fwd(t, x, g, b, y, mean, rstd, rows, hidden, c.stream); }));
    row(c, "layernorm_bwd", t, 0, 0, 0, 0, 4 * ebytes + 2 * params, median_seconds(c.stream, c.plan, [&] {
          layernorm_bwd(t, dy, x, g, mean, rstd, dx, dg, db, rows, hidden, c.stream);
        }));
    const int cols = 2048;  // softmax rows as in attention over 2048 keys
    row(c, "softmax_fwd", t, 0, 0, 0, 0, 2 * ebytes,
        median_seconds(c.stream, c.plan, [&] { softmax_fwd(t, x, y, elems / cols, cols, c.stream); }));
    row(c, "softmax_bwd", t, 0, 0, 0, 0, 4 * ebytes,
        median_seconds(c.stream, c.plan, [&] { softmax_bwd(t, y, dy, dx, elems / cols, cols, c.stream); }));
    row(c, "gelu_fwd", t, 0, 0, 0, 0, 2 * ebytes, median_seconds(c.stream, c.plan, [&] { gelu_fwd(t, x, y, elems, c.stream); }));
    row(c, "gelu_bwd", t, 0, 0, 0, 0, 4 * ebytes,
        median_seconds(c.stream, c.plan, [&] { gelu_bwd(t, x, dy, dx, elems, c.stream); }));
    // Embedding: `rows` tokens gathered from a 50 000-row table.
    const int vocab = 50000;
    int* ids = static_cast<int*>(alloc(rows * sizeof(int)));
    std::vector<int> host(rows);
    for (int i = 0; i < rows; ++i) host[i] = static_cast<int>((i * 2654435761u) % vocab);
    HETSIM_CUDA(cudaMemcpy(ids, host.data(), rows * sizeof(int), cudaMemcpyHostToDevice));
    void* table = alloc(static_cast<size_t>(vocab) * hidden * e);
    float* dtable = static_cast<float*>(alloc(static_cast<size_t>(vocab) * hidden * 4));
    row(c, "embedding_fwd", t, 0, 0, 0, 0, 3 * ebytes,
        median_seconds(c.stream, c.plan, [&] { embedding_fwd(t, ids, table, y, rows, hidden, c.stream); }));
    row(c, "embedding_bwd", t, 0, 0, 0, 0, 3 * ebytes,
        median_seconds(c.stream, c.plan, [&] { embedding_bwd(t, ids, dy, dtable, rows, hidden, c.stream); }));
    row(c, "copy", t, 0, 0, 0, 0, 2 * ebytes, median_seconds(c.stream, c.plan, [&] {
          HETSIM_CUDA(cudaMemcpyAsync(y, x, elems * e, cudaMemcpyDeviceToDevice, c.stream));
        }));
    for (void* p : {x, y, dy, dx, static_cast<void*>(g), static_cast<void*>(b), static_cast<void*>(mean),
                    static_cast<void*>(rstd), static_cast<void*>(dg), static_cast<void*>(db), static_cast<void*>(ids), table,
                    static_cast<void*>(dtable)}) {
      HETSIM_CUDA(cudaFree(p));
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  Ctx c;
  c.device = arg(argc, argv, "--device", "");
  const std::string out = arg(argc, argv, "--out", "");
  const bool quick = arg(argc, argv, "--quick", "0") == "1";
  const bool append = arg(argc, argv, "--append", "0") == "1";
  const bool gemm_only = arg(argc, argv, "--only", "") == "gemm";
  const std::vector<long> tokens = numbers(arg(argc, argv, "--tokens", ""));
  const std::string dtypes = arg(argc, argv, "--dtypes", "fp32,tf32,fp16,bf16");
  if (c.device.empty() || out.empty()) {
    std::fprintf(stderr, "usage: hetsim-kernels --device HETSIM_DEVICE_NAME --out FILE.csv [--quick 1] "
                         "[--tokens N,N --dtypes fp16,bf16 --only gemm --append 1]\n");
    return 2;
  }
  c.out = std::fopen(out.c_str(), append ? "a" : "w");
  if (c.out == nullptr) {
    std::fprintf(stderr, "%s: cannot write\n", out.c_str());
    return 2;
  }
  c.id = identify(0);
  HETSIM_CUDA(cudaStreamCreate(&c.stream));
  HETSIM_CUBLAS(cublasCreate(&c.blas));
  HETSIM_CUBLAS(cublasSetStream(c.blas, c.stream));
  if (!append) {
    std::fprintf(c.out, "# measured by hetsim-kernels on %s (%s, %d MHz) at %s\n", c.id.name.c_str(), c.id.driver.c_str(),
                 c.id.clock_mhz, c.id.date.c_str());
    std::fprintf(c.out, "device,kernel,dtype,batch,m,n,k,bytes,seconds,gpu,driver,clock_mhz,date\n");
  }
  for (Dtype t : {Dtype::kFp32, Dtype::kTf32, Dtype::kFp16, Dtype::kBf16}) {
    if (("," + dtypes + ",").find(std::string(",") + dtype_name(t) + ",") == std::string::npos) continue;
    std::fprintf(stderr, "hetsim-kernels: %s ...\n", dtype_name(t));
    measure_gemms(c, t, quick, tokens);
    if (t != Dtype::kTf32 && !gemm_only) {  // tf32 only changes matrix products
      measure_attention(c, t, quick);
      measure_memory_kernels(c, t, quick);
    }
  }
  std::fclose(c.out);
  return 0;
}
