// Fused softmax cross-entropy on the GPU (mirrors models/ops/softmax_xent.*): one block per
// row of logits, fp32 max/sum; the probabilities are never stored. Rows of 16-byte aligned
// multiples of 8 (GPT-2's padded vocabulary) are read eight elements at a time with the maximum
// and the sum in one sweep (online softmax): forward reads the logits once, backward twice. In
// training the classifier is one kernel (softmax_xent_forward_backward): the loss and the
// gradient, written over the logits, in backward's two reads.
#include "models/ops/softmax_xent.h"

#include "models/cuda/cuda_context.h"
#include "models/cuda/storage.cuh"

namespace zt::models::cuda {

namespace {

constexpr int kThreads = 512;

// Block-wide reduction through shared memory; every thread gets the result.
template <bool kMax> __device__ float block_reduce(float v, float* shared) {
  v = kMax ? warp_max(v) : warp_sum(v);
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  __syncthreads();  // shared may still be read by a previous reduction
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  v = lane < kThreads / 32 ? shared[lane] : (kMax ? -INFINITY : 0.0f);
  return kMax ? warp_max(v) : warp_sum(v);
}

// max and log(sum(exp(x - max))) of logits[row, 0..V).
template <typename S> __device__ void row_stats(const S* row, int V, float* shared, float& max, float& log_sum) {
  float m = -INFINITY;
  for (int v = threadIdx.x; v < V; v += kThreads) m = fmaxf(m, load(row + v));
  max = block_reduce<true>(m, shared);
  float sum = 0.0f;
  for (int v = threadIdx.x; v < V; v += kThreads) sum += expf(load(row + v) - max);
  log_sum = logf(block_reduce<false>(sum, shared));
}

// The same in one sweep: each thread keeps a running maximum and a sum rescaled when it grows.
template <typename S> __device__ void row_stats_vec8(const S* row, int V, int Vp, float* shared, float& max,
                                                    float& log_sum) {
  float m = -INFINITY, sum = 0.0f, x[8];
  for (int v = threadIdx.x * 8; v < Vp; v += kThreads * 8) {
    load8(row + v, x);
    float chunk_max = -INFINITY;
#pragma unroll
    for (int k = 0; k < 8; ++k)
      if (v + k < V) chunk_max = fmaxf(chunk_max, x[k]);
    if (chunk_max > m) sum *= expf(m - chunk_max), m = chunk_max;
#pragma unroll
    for (int k = 0; k < 8; ++k)
      if (v + k < V) sum += expf(x[k] - m);
  }
  max = block_reduce<true>(m, shared);
  log_sum = logf(block_reduce<false>(m == -INFINITY ? 0.0f : sum * expf(m - max), shared));
}

template <typename S>
__global__ void forward_kernel(float* losses, const S* logits, const std::int32_t* targets, int V, int Vp, bool vec8) {
  __shared__ float shared[kThreads / 32];
  int n = blockIdx.x;
  std::int32_t target = targets[n];
  if (target < 0) {
    if (threadIdx.x == 0) losses[n] = 0.0f;
    return;
  }
  const S* row = logits + static_cast<std::size_t>(n) * Vp;
  float max, log_sum;
  if (vec8) row_stats_vec8(row, V, Vp, shared, max, log_sum);
  else row_stats(row, V, shared, max, log_sum);
  if (threadIdx.x == 0) losses[n] = log_sum - (load(row + target) - max);
}

// dlogits may alias logits: every value is read by the thread that later writes it, and the
// reductions that need other threads' values finish (syncthreads) before any write. With losses
// (the fused classifier), the row's loss is written too, from the statistics already taken: one
// pass over the logits fewer than forward_kernel then this.
template <typename S>
__global__ void backward_kernel(S* dlogits, const S* logits, const std::int32_t* targets, float dloss, int V, int Vp,
                                bool vec8, float* losses) {
  __shared__ float shared[kThreads / 32];
  int n = blockIdx.x;
  std::int32_t target = targets[n];
  S* drow = dlogits + static_cast<std::size_t>(n) * Vp;
  if (target < 0) {
    if (losses != nullptr && threadIdx.x == 0) losses[n] = 0.0f;
    for (int v = threadIdx.x; v < Vp; v += kThreads) store(drow + v, 0.0f);
    return;
  }
  const S* row = logits + static_cast<std::size_t>(n) * Vp;
  float max, log_sum;
  if (vec8) row_stats_vec8(row, V, Vp, shared, max, log_sum);
  else row_stats(row, V, shared, max, log_sum);
  if (losses != nullptr) {
    if (threadIdx.x == 0) losses[n] = log_sum - (load(row + target) - max);
    __syncthreads();  // the target's logit is read before any thread overwrites it
  }
  if (vec8) {
    float x[8];
    for (int v = threadIdx.x * 8; v < Vp; v += kThreads * 8) {
      load8(row + v, x);
#pragma unroll
      for (int k = 0; k < 8; ++k)
        x[k] = v + k < V ? dloss * (expf(x[k] - max - log_sum) - (v + k == target ? 1.0f : 0.0f)) : 0.0f;
      store8(drow + v, x);
    }
    return;
  }
  for (int v = threadIdx.x; v < Vp; v += kThreads) {
    float g = 0.0f;
    if (v < V) g = dloss * (expf(load(row + v) - max - log_sum) - (v == target ? 1.0f : 0.0f));
    store(drow + v, g);
  }
}

template <typename S>
void launch_forward(float* losses, const void* logits, const std::int32_t* targets, int N, int V, int Vp,
                    cudaStream_t s) {
  forward_kernel<S><<<N, kThreads, 0, s>>>(losses, static_cast<const S*>(logits), targets, V, Vp,
                                           vectorizable(Vp, {logits}));
}

template <typename S>
void launch_backward(void* dlogits, const void* logits, const std::int32_t* targets, float dloss, int N, int V, int Vp,
                     float* losses, cudaStream_t s) {
  backward_kernel<S><<<N, kThreads, 0, s>>>(static_cast<S*>(dlogits), static_cast<const S*>(logits), targets, dloss, V,
                                            Vp, vectorizable(Vp, {logits, dlogits}), losses);
}

// acc += (f32)(sum(losses) / valid): one block, each thread a fixed strided subset in f64, then a
// fixed-order tree; the same bits on every run.
__global__ void add_mean_loss_kernel(double* acc, const float* losses, std::size_t n, int valid) {
  __shared__ double partial[kThreads];
  double sum = 0.0;
  for (std::size_t i = threadIdx.x; i < n; i += kThreads) sum += losses[i];
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int stride = kThreads / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) *acc += valid > 0 ? static_cast<double>(static_cast<float>(partial[0] / valid)) : 0.0;
}

}  // namespace

void add_mean_loss(double* acc, const float* losses, std::size_t n, int valid, cudaStream_t s) {
  add_mean_loss_kernel<<<1, kThreads, 0, s>>>(acc, losses, n, valid);
  ZT_CUDA_CHECK(cudaGetLastError());
}

void softmax_xent_forward(float* losses, const void* logits, const std::int32_t* targets, int N, int V, int Vp,
                          DType dt, cudaStream_t s) {
  if (N == 0) return;  // an empty grid is an invalid launch
  ZT_DISPATCH_STORAGE(dt, launch_forward, losses, logits, targets, N, V, Vp, s);
}

void softmax_xent_backward(void* dlogits, const void* logits, const std::int32_t* targets, float dloss, int N, int V,
                           int Vp, DType dt, cudaStream_t s, float* losses = nullptr) {
  if (N == 0) return;
  ZT_DISPATCH_STORAGE(dt, launch_backward, dlogits, logits, targets, dloss, N, V, Vp, losses, s);
}

}  // namespace zt::models::cuda

namespace zt::models::ops::on_cuda {

void softmax_xent_forward(ComputeContext& ctx, BufferView losses, BufferView logits, BufferView targets, int N, int V,
                          int Vp) {
  CudaComputeContext& c = as_cuda(ctx);
  cuda::softmax_xent_forward(float_data(losses), logits.data, int32_view(targets), N, V, Vp, c.dtype(), c.handle());
}

void softmax_xent_backward(ComputeContext& ctx, BufferView dlogits, BufferView logits, BufferView targets, float dloss,
                           int N, int V, int Vp) {
  CudaComputeContext& c = as_cuda(ctx);
  cuda::softmax_xent_backward(dlogits.data, logits.data, int32_view(targets), dloss, N, V, Vp, c.dtype(), c.handle());
}

void softmax_xent_forward_backward(ComputeContext& ctx, BufferView losses, BufferView logits, BufferView targets,
                                   float dloss, int N, int V, int Vp) {
  CudaComputeContext& c = as_cuda(ctx);
  cuda::softmax_xent_backward(logits.data, logits.data, int32_view(targets), dloss, N, V, Vp, c.dtype(), c.handle(),
                              float_data(losses));
}

void add_mean_loss(ComputeContext& ctx, BufferView acc, BufferView losses, int valid) {
  cuda::add_mean_loss(static_cast<double*>(acc.data), float_data(losses), losses.numel, valid, as_cuda(ctx).handle());
}
}  // namespace zt::models::ops::on_cuda
