// The step statistics on the GPU (optim/optimizer_ops.h): sums of squares of the gradient shard's
// parts in f64, then their total and its inf/NaN flag, in a fixed order so that repeated runs give
// the same bits — a fixed grid writes one partial per block, then one block sums the partials as a
// fixed tree (atomics across blocks would add in whatever order the blocks finish).
#include <cmath>
#include <cstring>

#include "core/cuda/cuda_check.h"
#include "optim/cuda/optimizer_kernels.h"
#include "optim/optimizer_ops.h"

namespace zt {
namespace {

constexpr int kThreads = 256;
constexpr int kBlocks = static_cast<int>(kStepStatsBlocks);  // one f64 partial each in the scratch

__device__ double block_sum(double value, double* shared) {
  shared[threadIdx.x] = value;
  __syncthreads();
  for (int stride = kThreads / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) shared[threadIdx.x] += shared[threadIdx.x + stride];
    __syncthreads();
  }
  return shared[0];
}

// Thread t of one block adds values t, t + kThreads, ... in order, then the block adds the
// threads' sums as a tree: a fixed order for any n.
__device__ double ordered_sum(const double* values, std::size_t n, double* shared) {
  double sum = 0.0;
  for (std::size_t i = threadIdx.x; i < n; i += kThreads) sum += values[i];
  return block_sum(sum, shared);
}

__global__ void partial_kernel(const float* grad, std::size_t count, double* partials) {
  __shared__ double shared[kThreads];
  double sum = 0.0;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(kThreads) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(kBlocks) * kThreads) {
    double g = grad[i];
    sum += g * g;
  }
  double total = block_sum(sum, shared);
  if (threadIdx.x == 0) partials[blockIdx.x] = total;
}

__global__ void sum_partials_kernel(const double* partials, double* out) {
  __shared__ double shared[kThreads];
  double total = ordered_sum(partials, kBlocks, shared);
  if (threadIdx.x == 0) *out = total;
}

__global__ void finish_kernel(const double* partials, std::size_t n, float* stats, int micro_batches) {
  __shared__ double shared[kThreads];
  double total = ordered_sum(partials, n, shared);
  if (threadIdx.x == 0) {
    DeviceStepStats* record = reinterpret_cast<DeviceStepStats*>(stats);
    record->sum_of_squares = static_cast<float>(total);
    // inf or NaN anywhere makes its partial, and so the total, inf or NaN (squares never cancel).
    record->non_finite = isfinite(total) ? 0.0f : 1.0f;
    record->exact_sum_of_squares = total;
    record->loss = static_cast<float>(record->loss_accumulator / micro_batches);
  }
}

}  // namespace

void cuda::sum_of_squares(const float* grad, std::size_t count, double* partial, float* scratch, cudaStream_t stream) {
  auto* partials = reinterpret_cast<double*>(scratch);
  partial_kernel<<<kBlocks, kThreads, 0, stream>>>(grad, count, partials);
  ZT_CUDA_CHECK(cudaGetLastError());
  sum_partials_kernel<<<1, kThreads, 0, stream>>>(partials, partial);
  ZT_CUDA_CHECK(cudaGetLastError());
}

void cuda::finish_step_stats(const double* partials, std::size_t n, float* stats, int micro_batches,
                             cudaStream_t stream) {
  finish_kernel<<<1, kThreads, 0, stream>>>(partials, n, stats, micro_batches);
  ZT_CUDA_CHECK(cudaGetLastError());
}

}  // namespace zt
