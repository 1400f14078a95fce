// CUDA kernels without reductions across rows: embedding, bias, GELU, residual, head permutes,
// plus the column sums used by bias and LayerNorm gradients. Each mirrors models/layers/*.
#include "models/cuda/kernels.h"
#include "models/cuda/storage.cuh"

namespace zt::models::cuda {

namespace {

constexpr unsigned kThreads = 256;

// ---- embedding ----

// tokens (B, T) -> out (B, T, C): one thread per output element.
template <typename S>
__global__ void embedding_forward_kernel(S* out, const std::int32_t* tokens, const S* wte, const S* wpe, int T, int C,
                                         std::size_t n) {
  std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  int c = static_cast<int>(i % C);
  std::size_t bt = i / C;
  int t = static_cast<int>(bt % T);
  store(out + i, load(wte + static_cast<std::size_t>(tokens[bt]) * C + c) + load(wpe + static_cast<std::size_t>(t) * C + c));
}

// dwte: one block per distinct token, threads over channels, summing that token's positions in
// ascending order (the host-built TokenIndex), so the result is deterministic without atomics.
template <typename S>
__global__ void embedding_backward_wte_kernel(S* dwte, const S* dout, const std::int32_t* positions,
                                              const std::int32_t* starts, const std::int32_t* group_tokens, int C) {
  int g = blockIdx.x;
  std::size_t row = static_cast<std::size_t>(group_tokens[g]) * C;
  for (int c = threadIdx.x; c < C; c += blockDim.x) {
    float acc = 0.0f;
    for (int k = starts[g]; k < starts[g + 1]; ++k) acc += load(dout + static_cast<std::size_t>(positions[k]) * C + c);
    store(dwte + row + c, load(dwte + row + c) + acc);
  }
}

// dwpe (T, C): one thread per (t, c), summing over b in order.
template <typename S>
__global__ void embedding_backward_wpe_kernel(S* dwpe, const S* dout, int B, int T, int C) {
  std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i >= static_cast<std::size_t>(T) * C) return;
  float acc = 0.0f;
  for (int b = 0; b < B; ++b) acc += load(dout + static_cast<std::size_t>(b) * T * C + i);
  store(dwpe + i, load(dwpe + i) + acc);
}

template <typename S>
void launch_embedding_forward(void* out, const std::int32_t* tokens, const void* wte, const void* wpe, int B, int T,
                              int C, cudaStream_t s) {
  std::size_t n = static_cast<std::size_t>(B) * T * C;
  embedding_forward_kernel<S><<<blocks_for(n, kThreads), kThreads, 0, s>>>(
      static_cast<S*>(out), tokens, static_cast<const S*>(wte), static_cast<const S*>(wpe), T, C, n);
}

template <typename S>
void launch_embedding_backward(void* dwte, void* dwpe, const void* dout, const std::int32_t* positions,
                               const std::int32_t* starts, const std::int32_t* group_tokens, int groups, int B, int T,
                               int C, cudaStream_t s) {
  if (groups > 0)
    embedding_backward_wte_kernel<S><<<groups, kThreads, 0, s>>>(static_cast<S*>(dwte), static_cast<const S*>(dout),
                                                                 positions, starts, group_tokens, C);
  std::size_t n = static_cast<std::size_t>(T) * C;
  embedding_backward_wpe_kernel<S><<<blocks_for(n, kThreads), kThreads, 0, s>>>(
      static_cast<S*>(dwpe), static_cast<const S*>(dout), B, T, C);
}

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

template <typename S>
void launch_bias_forward(void* out, const void* bias, int N, int OC, int ld, cudaStream_t s) {
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

// ---- GELU, residual ----

constexpr float kSqrt2OverPi = 0.7978845608028654f;
constexpr float kCubic = 0.044715f;

template <typename S>
__global__ void gelu_forward_kernel(S* out, const S* inp, std::size_t n) {
  std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  float x = load(inp + i);
  store(out + i, 0.5f * x * (1.0f + tanhf(kSqrt2OverPi * (x + kCubic * x * x * x))));
}

template <typename S>
__global__ void gelu_backward_kernel(S* dinp, const S* inp, const S* dout, std::size_t n) {
  std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  float x = load(inp + i);
  float th = tanhf(kSqrt2OverPi * (x + kCubic * x * x * x));
  float du = kSqrt2OverPi * (1.0f + 3.0f * kCubic * x * x);
  float grad = 0.5f * (1.0f + th) + 0.5f * x * (1.0f - th * th) * du;
  store(dinp + i, load(dout + i) * grad);
}

template <typename S>
__global__ void residual_kernel(S* out, const S* a, const S* b, std::size_t n) {
  std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < n) store(out + i, load(a + i) + load(b + i));
}

template <typename S> void launch_gelu_forward(void* out, const void* inp, std::size_t n, cudaStream_t s) {
  gelu_forward_kernel<S><<<blocks_for(n, kThreads), kThreads, 0, s>>>(static_cast<S*>(out), static_cast<const S*>(inp), n);
}
template <typename S>
void launch_gelu_backward(void* dinp, const void* inp, const void* dout, std::size_t n, cudaStream_t s) {
  gelu_backward_kernel<S><<<blocks_for(n, kThreads), kThreads, 0, s>>>(
      static_cast<S*>(dinp), static_cast<const S*>(inp), static_cast<const S*>(dout), n);
}
template <typename S>
void launch_residual(void* out, const void* a, const void* b, std::size_t n, cudaStream_t s) {
  residual_kernel<S><<<blocks_for(n, kThreads), kThreads, 0, s>>>(static_cast<S*>(out), static_cast<const S*>(a),
                                                                  static_cast<const S*>(b), n);
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

void embedding_forward(void* out, const std::int32_t* tokens, const void* wte, const void* wpe, int B, int T, int C,
                       DType dt, cudaStream_t s) {
  ZT_DISPATCH_STORAGE(dt, launch_embedding_forward, out, tokens, wte, wpe, B, T, C, s);
}

void embedding_backward(void* dwte, void* dwpe, const void* dout, const std::int32_t* positions,
                        const std::int32_t* starts, const std::int32_t* group_tokens, int groups, int B, int T, int C,
                        DType dt, cudaStream_t s) {
  ZT_DISPATCH_STORAGE(dt, launch_embedding_backward, dwte, dwpe, dout, positions, starts, group_tokens, groups, B, T,
                      C, s);
}

std::size_t column_sum_scratch_floats(int N, int C) {
  return static_cast<std::size_t>((N + kRowsPerChunk - 1) / kRowsPerChunk) * C;
}

void bias_forward(void* out, const void* bias, int N, int OC, int ld, DType dt, cudaStream_t s) {
  ZT_DISPATCH_STORAGE(dt, launch_bias_forward, out, bias, N, OC, ld, s);
}

void bias_backward(void* dbias, const void* dout, float* scratch, int N, int OC, int ld, DType dt, cudaStream_t s) {
  ZT_DISPATCH_STORAGE(dt, launch_bias_backward, dbias, dout, scratch, N, OC, ld, s);
}

void gelu_forward(void* out, const void* inp, std::size_t n, DType dt, cudaStream_t s) {
  ZT_DISPATCH_STORAGE(dt, launch_gelu_forward, out, inp, n, s);
}

void gelu_backward(void* dinp, const void* inp, const void* dout, std::size_t n, DType dt, cudaStream_t s) {
  ZT_DISPATCH_STORAGE(dt, launch_gelu_backward, dinp, inp, dout, n, s);
}

void residual_forward(void* out, const void* a, const void* b, std::size_t n, DType dt, cudaStream_t s) {
  ZT_DISPATCH_STORAGE(dt, launch_residual, out, a, b, n, s);
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
