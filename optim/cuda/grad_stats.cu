// grad_stats on the GPU: a grid-stride sum of squares in double, one atomic per block.
#include <cmath>

#include "optim/grad_stats.h"
#include "runtime/core/cuda/cuda_check.h"

namespace zt {
namespace {

constexpr int kThreads = 256;

__global__ void grad_stats_kernel(const float* grad, std::size_t count, double* sum_of_squares, int* non_finite) {
  __shared__ double partial[kThreads];
  double sum = 0.0;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    double g = grad[i];
    sum += g * g;
  }
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int stride = kThreads / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    atomicAdd(sum_of_squares, partial[0]);
    if (!isfinite(partial[0])) atomicOr(non_finite, 1);
  }
}

}  // namespace

void grad_stats_cuda(const float* grad, std::size_t count, double* sum_of_squares, int* non_finite, void* stream) {
  if (count == 0) return;
  std::size_t wanted = (count + kThreads - 1) / kThreads;
  unsigned blocks = static_cast<unsigned>(wanted < 1024 ? wanted : 1024);
  grad_stats_kernel<<<blocks, kThreads, 0, static_cast<cudaStream_t>(stream)>>>(grad, count, sum_of_squares,
                                                                               non_finite);
  ZT_CUDA_CHECK(cudaGetLastError());
}

}  // namespace zt
