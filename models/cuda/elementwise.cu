// CUDA kernels that several ops use: the bias add and the column sums of bias and norm gradients
// (linear, gelu, layernorm, rmsnorm), and the head permutes of attention (attention,
// gqa_attention). Each mirrors the CPU code of the op that uses it.
#include "models/cuda/shared_kernels.h"
#include "models/cuda/storage.cuh"

namespace zt::models::cuda {

namespace {

constexpr unsigned kThreads = 256;

// ---- bias ----

template <typename S>
__global__ void bias_forward_kernel(S* out, const S* bias, int OC, int ld, std::size_t n) {
  std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  std::size_t row = i / OC;
  int o = static_cast<int>(i % OC);
  S* p = out + row * ld + o;
  store(p, load(p) + load(bias + o));
}

// Eight columns a thread, its bias loaded once and added to every row the thread takes (no
// division per element; the scalar kernel above spent most of its time in 64-bit divisions).
template <typename S>
__global__ void bias_forward_vec8_kernel(S* out, const S* bias, int N, int OC, int ld) {
  const int c = (blockIdx.x * blockDim.x + threadIdx.x) * 8;
  if (c >= OC) return;
  float b[8], v[8];
  load8(bias + c, b);
  for (int row = blockIdx.y; row < N; row += gridDim.y) {
    S* p = out + static_cast<std::size_t>(row) * ld + c;
    load8(p, v);
#pragma unroll
    for (int i = 0; i < 8; ++i) v[i] += b[i];
    store8(p, v);
  }
}

template <typename S>
void launch_bias_forward(void* out, const void* bias, int N, int OC, int ld, cudaStream_t s) {
  if (N <= 0 || OC <= 0) return;  // nothing to add (and no zero-thread launch)
  if (vectorizable(OC, {out, bias}) && ld % 8 == 0) {
    const unsigned threads = std::min(kThreads, static_cast<unsigned>((OC / 8 + 31) / 32 * 32));
    const dim3 grid(blocks_for(static_cast<std::size_t>(OC / 8), threads), chunk_grid_y(std::min(N, 2048)));
    bias_forward_vec8_kernel<S><<<grid, threads, 0, s>>>(static_cast<S*>(out), static_cast<const S*>(bias), N, OC, ld);
    return;
  }
  std::size_t n = static_cast<std::size_t>(N) * OC;
  bias_forward_kernel<S><<<blocks_for(n, kThreads), kThreads, 0, s>>>(static_cast<S*>(out),
                                                                      static_cast<const S*>(bias), OC, ld, n);
}

// Column sums in two deterministic passes: partial[chunk][c] = sum of rows in the chunk, then
// dst[c] += sum over chunks in order.
constexpr int kRowsPerChunk = 64;

template <typename S>
__global__ void column_partial_kernel(float* partial, const S* src, int N, int cols, int ld) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= cols) return;
  const int chunks = (N + kRowsPerChunk - 1) / kRowsPerChunk;
  for (int chunk = blockIdx.y; chunk < chunks; chunk += gridDim.y) {
    int end = min(N, (chunk + 1) * kRowsPerChunk);
    float acc = 0.0f;
    for (int r = chunk * kRowsPerChunk; r < end; ++r) acc += load(src + static_cast<std::size_t>(r) * ld + c);
    partial[static_cast<std::size_t>(chunk) * cols + c] = acc;
  }
}

template <typename S>
__global__ void column_finish_kernel(S* dst, const float* partial, int chunks, int cols) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= cols) return;
  float acc = 0.0f;
  for (int k = 0; k < chunks; ++k) acc += partial[static_cast<std::size_t>(k) * cols + c];
  store(dst + c, load(dst + c) + acc);
}

template <typename S>
void launch_bias_backward(void* dbias, const void* dout, float* scratch, int N, int OC, int ld, cudaStream_t s) {
  int chunks = (N + kRowsPerChunk - 1) / kRowsPerChunk;
  dim3 grid(blocks_for(OC, kThreads), chunk_grid_y(chunks));
  column_partial_kernel<S><<<grid, kThreads, 0, s>>>(scratch, static_cast<const S*>(dout), N, OC, ld);
  column_finish_kernel<S><<<blocks_for(OC, kThreads), kThreads, 0, s>>>(static_cast<S*>(dbias), scratch, chunks, OC);
}

// ---- head permutes ----

// One thread per element of a (B, NH, T, hs) tensor; `to_heads` picks the direction between it
// and column block `part` (0 = q, 1 = k, 2 = v) of rows of width `ld` in (B, T, ld).
template <typename S>
__global__ void permute_heads_kernel(S* heads, S* rows, int T, int C, int NH, int ld, int part, bool to_heads,
                                     std::size_t n) {
  std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  int hs = C / NH;
  int d = static_cast<int>(i % hs);
  std::size_t r = i / hs;
  int t = static_cast<int>(r % T);
  r /= T;
  int h = static_cast<int>(r % NH);
  std::size_t b = r / NH;
  S* row = rows + (b * T + t) * ld + static_cast<std::size_t>(part) * C + h * hs + d;
  if (to_heads)
    heads[i] = *row;
  else
    *row = heads[i];
}

template <typename S>
void launch_permute(void* heads, void* rows, int B, int T, int C, int NH, int ld, int part, bool to_heads,
                    cudaStream_t s) {
  std::size_t n = static_cast<std::size_t>(B) * T * C;
  permute_heads_kernel<S><<<blocks_for(n, kThreads), kThreads, 0, s>>>(static_cast<S*>(heads), static_cast<S*>(rows), T,
                                                                       C, NH, ld, part, to_heads, n);
}

}  // namespace

std::size_t column_sum_scratch_floats(int N, int C) {
  return static_cast<std::size_t>((N + kRowsPerChunk - 1) / kRowsPerChunk) * C;
}

void bias_forward(void* out, const void* bias, int N, int OC, int ld, DType dt, cudaStream_t s) {
  ZT_DISPATCH_STORAGE(dt, launch_bias_forward, out, bias, N, OC, ld, s);
}

void bias_backward(void* dbias, const void* dout, float* scratch, int N, int OC, int ld, DType dt, cudaStream_t s) {
  ZT_DISPATCH_STORAGE(dt, launch_bias_backward, dbias, dout, scratch, N, OC, ld, s);
}

void split_heads(void* q, void* k, void* v, const void* qkv, int B, int T, int C, int NH, DType dt, cudaStream_t s) {
  void* rows = const_cast<void*>(qkv);  // read only in this direction
  ZT_DISPATCH_STORAGE(dt, launch_permute, q, rows, B, T, C, NH, 3 * C, 0, true, s);
  ZT_DISPATCH_STORAGE(dt, launch_permute, k, rows, B, T, C, NH, 3 * C, 1, true, s);
  ZT_DISPATCH_STORAGE(dt, launch_permute, v, rows, B, T, C, NH, 3 * C, 2, true, s);
}

void merge_heads(void* qkv, const void* q, const void* k, const void* v, int B, int T, int C, int NH, DType dt,
                 cudaStream_t s) {
  ZT_DISPATCH_STORAGE(dt, launch_permute, const_cast<void*>(q), qkv, B, T, C, NH, 3 * C, 0, false, s);
  ZT_DISPATCH_STORAGE(dt, launch_permute, const_cast<void*>(k), qkv, B, T, C, NH, 3 * C, 1, false, s);
  ZT_DISPATCH_STORAGE(dt, launch_permute, const_cast<void*>(v), qkv, B, T, C, NH, 3 * C, 2, false, s);
}

void heads_to_rows(void* out, const void* y, int B, int T, int C, int NH, DType dt, cudaStream_t s) {
  ZT_DISPATCH_STORAGE(dt, launch_permute, const_cast<void*>(y), out, B, T, C, NH, C, 0, false, s);
}

void rows_to_heads(void* y, const void* inp, int B, int T, int C, int NH, DType dt, cudaStream_t s) {
  ZT_DISPATCH_STORAGE(dt, launch_permute, y, const_cast<void*>(inp), B, T, C, NH, C, 0, true, s);
}

}  // namespace zt::models::cuda
