// The causal softmax of attention on the GPU (mirrors the middle of models/ops/attention.*);
// the score and value products are batched cuBLAS calls in attention_core.cpp.
#include "models/cuda/shared_kernels.h"
#include "models/cuda/storage.cuh"

namespace zt::models::cuda {

namespace {

constexpr int kWarpsPerBlock = 8;

// att (rows, T) in place, row r is query position i = r % T: softmax over j <= i, zero above.
template <typename S>
__global__ void causal_softmax_forward_kernel(S* att, int rows, int T) {
  int row = blockIdx.x * kWarpsPerBlock + threadIdx.x / 32, lane = threadIdx.x % 32;
  if (row >= rows) return;
  int i = row % T;
  S* a = att + static_cast<std::size_t>(row) * T;
  float m = -INFINITY;
  for (int j = lane; j <= i; j += 32) m = fmaxf(m, load(a + j));
  m = warp_max(m);
  float sum = 0.0f;
  for (int j = lane; j <= i; j += 32) sum += __expf(load(a + j) - m);
  float inv = 1.0f / warp_sum(sum);
  for (int j = lane; j < T; j += 32) store(a + j, j <= i ? __expf(load(a + j) - m) * inv : 0.0f);
}

// datt (rows, T) in place: att * (datt - sum_j att * datt), zero above the diagonal.
template <typename S>
__global__ void causal_softmax_backward_kernel(S* datt, const S* att, int rows, int T) {
  int row = blockIdx.x * kWarpsPerBlock + threadIdx.x / 32, lane = threadIdx.x % 32;
  if (row >= rows) return;
  int i = row % T;
  std::size_t base = static_cast<std::size_t>(row) * T;
  float dot = 0.0f;
  for (int j = lane; j <= i; j += 32) dot += load(att + base + j) * load(datt + base + j);
  dot = warp_sum(dot);
  for (int j = lane; j < T; j += 32)
    store(datt + base + j, j <= i ? load(att + base + j) * (load(datt + base + j) - dot) : 0.0f);
}

template <typename S> void launch_forward(void* att, int rows, int T, cudaStream_t s) {
  const unsigned blocks = row_blocks(rows, kWarpsPerBlock);
  causal_softmax_forward_kernel<S><<<blocks, kWarpsPerBlock * 32, 0, s>>>(static_cast<S*>(att), rows, T);
}

template <typename S> void launch_backward(void* datt, const void* att, int rows, int T, cudaStream_t s) {
  const unsigned blocks = row_blocks(rows, kWarpsPerBlock);
  causal_softmax_backward_kernel<S><<<blocks, kWarpsPerBlock * 32, 0, s>>>(static_cast<S*>(datt),
                                                                           static_cast<const S*>(att), rows, T);
}

}  // namespace

void causal_softmax_forward(void* att, int rows, int T, DType dt, cudaStream_t s) {
  ZT_DISPATCH_STORAGE(dt, launch_forward, att, rows, T, s);
}

void causal_softmax_backward(void* datt, const void* att, int rows, int T, DType dt, cudaStream_t s) {
  ZT_DISPATCH_STORAGE(dt, launch_backward, datt, att, rows, T, s);
}

}  // namespace zt::models::cuda
