// Grouped-query attention's head permutes on the GPU (the products and the causal softmax are
// shared with GPT-2's attention: gemm.h, attention.cu). Mirrors models/layers/gqa_attention.*.
#include "models/cuda/llama_kernels.h"
#include "models/cuda/storage.cuh"

namespace zt::models::cuda {

namespace {

constexpr unsigned kThreads = 256;

// One thread per element of a (B, NH, T, hs) tensor: q from the query columns, k and v from the
// columns of kv head h / (NH / KV) (repeated over the group).
template <typename S>
__global__ void gqa_split_kernel(S* q, S* k, S* v, const S* qkv, int T, int NH, int KV, int hs, std::size_t n) {
  std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  const int d = static_cast<int>(i % hs);
  std::size_t r = i / hs;
  const int t = static_cast<int>(r % T);
  r /= T;
  const int h = static_cast<int>(r % NH);
  const std::size_t b = r / NH;
  const int ld = (NH + 2 * KV) * hs, kvh = h / (NH / KV);
  const S* row = qkv + (b * T + t) * ld;
  q[i] = row[h * hs + d];
  k[i] = row[(NH + kvh) * hs + d];
  v[i] = row[(NH + KV + kvh) * hs + d];
}

// One thread per element of a qkv row block (B, T, W): dq copied from its head; dk and dv summed
// over the NH / KV heads of the group in head order.
template <typename S>
__global__ void gqa_merge_kernel(S* dqkv, const S* dq, const S* dk, const S* dv, int T, int NH, int KV, int hs,
                                 std::size_t n) {
  std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  const int ld = (NH + 2 * KV) * hs, group = NH / KV;
  const int col = static_cast<int>(i % ld);
  const std::size_t bt = i / ld;
  const int t = static_cast<int>(bt % T);
  const std::size_t b = bt / T;
  const int head = col / hs, d = col % hs;
  auto at = [&](int h) { return ((b * NH + h) * T + t) * hs + d; };  // (B, NH, T, hs)
  if (head < NH) {
    dqkv[i] = dq[at(head)];
    return;
  }
  const bool is_k = head < NH + KV;
  const int kvh = is_k ? head - NH : head - NH - KV;
  const S* src = is_k ? dk : dv;
  float acc = 0.0f;
  for (int h = kvh * group; h < (kvh + 1) * group; ++h) acc += load(src + at(h));
  store(dqkv + i, acc);
}

template <typename S>
void launch_split(void* q, void* k, void* v, const void* qkv, int B, int T, int NH, int KV, int hs, cudaStream_t s) {
  std::size_t n = static_cast<std::size_t>(B) * NH * T * hs;
  gqa_split_kernel<S><<<blocks_for(n, kThreads), kThreads, 0, s>>>(static_cast<S*>(q), static_cast<S*>(k),
                                                                   static_cast<S*>(v), static_cast<const S*>(qkv), T,
                                                                   NH, KV, hs, n);
}

template <typename S>
void launch_merge(void* dqkv, const void* dq, const void* dk, const void* dv, int B, int T, int NH, int KV, int hs,
                  cudaStream_t s) {
  std::size_t n = static_cast<std::size_t>(B) * T * (NH + 2 * KV) * hs;
  gqa_merge_kernel<S><<<blocks_for(n, kThreads), kThreads, 0, s>>>(static_cast<S*>(dqkv), static_cast<const S*>(dq),
                                                                   static_cast<const S*>(dk),
                                                                   static_cast<const S*>(dv), T, NH, KV, hs, n);
}

}  // namespace

void gqa_split_heads(void* q, void* k, void* v, const void* qkv, int B, int T, int NH, int KV, int hs, DType dt,
                     cudaStream_t s) {
  ZT_DISPATCH_STORAGE(dt, launch_split, q, k, v, qkv, B, T, NH, KV, hs, s);
}

void gqa_merge_heads(void* dqkv, const void* dq, const void* dk, const void* dv, int B, int T, int NH, int KV, int hs,
                     DType dt, cudaStream_t s) {
  ZT_DISPATCH_STORAGE(dt, launch_merge, dqkv, dq, dk, dv, B, T, NH, KV, hs, s);
}

}  // namespace zt::models::cuda
