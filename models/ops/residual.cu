// The residual add on the GPU (mirrors residual.cpp): eight elements a thread where the views
// allow 16-byte accesses.
#include "models/ops/residual.h"

#include "models/cuda/cuda_context.h"
#include "models/cuda/storage.cuh"

namespace zt::models::cuda {

namespace {

constexpr unsigned kThreads = 256;

template <typename S>
__global__ void residual_kernel(S* out, const S* a, const S* b, std::size_t n) {
  std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < n) store(out + i, load(a + i) + load(b + i));
}

// Eight elements a thread in 16-byte accesses (n a multiple of 8, every pointer 16-byte aligned).
template <typename S>
__global__ void residual_vec8_kernel(S* out, const S* a, const S* b, std::size_t n8) {
  std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i >= n8) return;
  float x[8], y[8];
  load8(a + 8 * i, x);
  load8(b + 8 * i, y);
#pragma unroll
  for (int k = 0; k < 8; ++k) x[k] += y[k];
  store8(out + 8 * i, x);
}

template <typename S>
void launch_residual(void* out, const void* a, const void* b, std::size_t n, cudaStream_t s) {
  if (vectorizable(n, {out, a, b})) {
    residual_vec8_kernel<S><<<blocks_for(n / 8, kThreads), kThreads, 0, s>>>(
        static_cast<S*>(out), static_cast<const S*>(a), static_cast<const S*>(b), n / 8);
    return;
  }
  residual_kernel<S><<<blocks_for(n, kThreads), kThreads, 0, s>>>(static_cast<S*>(out), static_cast<const S*>(a),
                                                                  static_cast<const S*>(b), n);
}

}  // namespace

void residual_forward(void* out, const void* a, const void* b, std::size_t n, DType dt, cudaStream_t s) {
  ZT_DISPATCH_STORAGE(dt, launch_residual, out, a, b, n, s);
}

}  // namespace zt::models::cuda

namespace zt::models::ops::on_cuda {

void residual_forward(ComputeContext& ctx, BufferView out, BufferView a, BufferView b) {
  CudaComputeContext& c = as_cuda(ctx);
  cuda::residual_forward(out.data, a.data, b.data, a.numel, c.dtype(), c.handle());
}

}  // namespace zt::models::ops::on_cuda
