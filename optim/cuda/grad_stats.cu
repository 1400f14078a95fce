// The step statistics on the GPU (optim/optimizer_ops.h): the gradient shard's sum of squares in
// f64 and its inf/NaN flag, in a fixed order so that repeated runs give the same bits — a fixed
// grid writes one partial per block, then one block sums the partials as a fixed tree (atomics
// across blocks would add in whatever order the blocks finish).
#include <cmath>
#include <cstring>

#include "core/cuda/cuda_check.h"
#include "optim/cuda/optimizer_kernels.h"
#include "optim/optimizer_ops.h"

namespace zt {
namespace {

constexpr int kThreads = 256;
constexpr int kBlocks = 512;  // step_stats_scratch_numel() = 3 * kBlocks: f64 sums and i32 flags


__device__ double block_sum(double value, double* shared) {
  shared[threadIdx.x] = value;
  __syncthreads();
  for (int stride = kThreads / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) shared[threadIdx.x] += shared[threadIdx.x + stride];
    __syncthreads();
  }
  return shared[0];
}

__global__ void partial_kernel(const float* grad, std::size_t count, double* partial_sums, int* partial_flags) {
  __shared__ double shared[kThreads];
  double sum = 0.0;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(kThreads) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(kBlocks) * kThreads) {
    double g = grad[i];
    sum += g * g;
  }
  double total = block_sum(sum, shared);
  if (threadIdx.x == 0) {
    partial_sums[blockIdx.x] = total;
    partial_flags[blockIdx.x] = isfinite(total) ? 0 : 1;
  }
}

__global__ void finish_kernel(const double* partial_sums, const int* partial_flags, float* stats, int micro_batches) {
  __shared__ double shared[kThreads];
  double sum = 0.0, flags = 0.0;
  for (int b = threadIdx.x; b < kBlocks; b += kThreads) {
    sum += partial_sums[b];
    flags += partial_flags[b];
  }
  double total = block_sum(sum, shared);
  __syncthreads();
  double any_flag = block_sum(flags, shared);
  if (threadIdx.x == 0) {
    DeviceStepStats* record = reinterpret_cast<DeviceStepStats*>(stats);
    record->sum_of_squares = static_cast<float>(total);
    record->non_finite = any_flag > 0.0 || !isfinite(total) ? 1.0f : 0.0f;
    record->exact_sum_of_squares = total;
    record->loss = static_cast<float>(record->loss_accumulator / micro_batches);
  }
}

}  // namespace

void cuda::finish_step_stats(const float* grad, std::size_t count, float* stats, int micro_batches, float* scratch,
                             cudaStream_t stream) {
  auto* partial_sums = reinterpret_cast<double*>(scratch);
  auto* partial_flags = reinterpret_cast<int*>(scratch + 2 * kBlocks);
  partial_kernel<<<kBlocks, kThreads, 0, stream>>>(grad, count, partial_sums, partial_flags);
  ZT_CUDA_CHECK(cudaGetLastError());
  finish_kernel<<<1, kThreads, 0, stream>>>(partial_sums, partial_flags, stats, micro_batches);
  ZT_CUDA_CHECK(cudaGetLastError());
}

}  // namespace zt
