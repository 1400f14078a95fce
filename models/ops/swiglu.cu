// SwiGLU on the GPU (mirrors swiglu.cpp).
#include "models/ops/swiglu.h"

#include "models/cuda/cuda_context.h"
#include "models/cuda/storage.cuh"

namespace zt::models::cuda {

namespace {

constexpr unsigned kThreads = 256;

template <typename S>
__global__ void swiglu_forward_kernel(S* out, const S* gu, int I, std::size_t n) {
  std::size_t idx = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (idx >= n) return;
  const std::size_t row = idx / I;
  const int i = static_cast<int>(idx % I);
  const float gate = load(gu + row * 2 * I + i), up = load(gu + row * 2 * I + I + i);
  const float sig = 1.0f / (1.0f + expf(-gate));
  store(out + idx, gate * sig * up);
}

template <typename S>
__global__ void swiglu_backward_kernel(S* dgu, const S* dout, const S* gu, int I, std::size_t n) {
  std::size_t idx = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (idx >= n) return;
  const std::size_t row = idx / I;
  const int i = static_cast<int>(idx % I);
  const float gate = load(gu + row * 2 * I + i), up = load(gu + row * 2 * I + I + i), d = load(dout + idx);
  const float sig = 1.0f / (1.0f + expf(-gate));
  store(dgu + row * 2 * I + i, d * up * sig * (1.0f + gate * (1.0f - sig)));
  store(dgu + row * 2 * I + I + i, d * gate * sig);
}

template <typename S> void launch_swiglu_forward(void* out, const void* gu, int N, int I, cudaStream_t s) {
  std::size_t n = static_cast<std::size_t>(N) * I;
  swiglu_forward_kernel<S><<<blocks_for(n, kThreads), kThreads, 0, s>>>(static_cast<S*>(out),
                                                                        static_cast<const S*>(gu), I, n);
}

template <typename S>
void launch_swiglu_backward(void* dgu, const void* dout, const void* gu, int N, int I, cudaStream_t s) {
  std::size_t n = static_cast<std::size_t>(N) * I;
  swiglu_backward_kernel<S><<<blocks_for(n, kThreads), kThreads, 0, s>>>(
      static_cast<S*>(dgu), static_cast<const S*>(dout), static_cast<const S*>(gu), I, n);
}

}  // namespace

void swiglu_forward(void* out, const void* gu, int N, int I, DType dt, cudaStream_t s) {
  ZT_DISPATCH_STORAGE(dt, launch_swiglu_forward, out, gu, N, I, s);
}

void swiglu_backward(void* dgu, const void* dout, const void* gu, int N, int I, DType dt, cudaStream_t s) {
  ZT_DISPATCH_STORAGE(dt, launch_swiglu_backward, dgu, dout, gu, N, I, s);
}

}  // namespace zt::models::cuda

namespace zt::models::ops::on_cuda {

void swiglu_forward(ComputeContext& ctx, BufferView out, BufferView gu, int N, int I) {
  CudaComputeContext& c = as_cuda(ctx);
  cuda::swiglu_forward(out.data, gu.data, N, I, c.dtype(), c.handle());
}

void swiglu_backward(ComputeContext& ctx, BufferView dgu, BufferView dout, BufferView gu, int N, int I) {
  CudaComputeContext& c = as_cuda(ctx);
  cuda::swiglu_backward(dgu.data, dout.data, gu.data, N, I, c.dtype(), c.handle());
}

}  // namespace zt::models::ops::on_cuda
