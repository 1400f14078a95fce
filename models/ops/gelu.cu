// GELU (tanh) after a bias on the GPU (mirrors gelu.cpp): the shared bias kernels, then GELU.
#include "models/ops/gelu.h"

#include "models/cuda/cuda_context.h"
#include "models/cuda/shared_kernels.h"
#include "models/cuda/storage.cuh"

namespace zt::models::cuda {

namespace {

constexpr unsigned kThreads = 256;

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

template <typename S> void launch_gelu_forward(void* out, const void* inp, std::size_t n, cudaStream_t s) {
  gelu_forward_kernel<S><<<blocks_for(n, kThreads), kThreads, 0, s>>>(static_cast<S*>(out), static_cast<const S*>(inp), n);
}
template <typename S>
void launch_gelu_backward(void* dinp, const void* inp, const void* dout, std::size_t n, cudaStream_t s) {
  gelu_backward_kernel<S><<<blocks_for(n, kThreads), kThreads, 0, s>>>(
      static_cast<S*>(dinp), static_cast<const S*>(inp), static_cast<const S*>(dout), n);
}
}  // namespace

void gelu_forward(void* out, const void* inp, std::size_t n, DType dt, cudaStream_t s) {
  ZT_DISPATCH_STORAGE(dt, launch_gelu_forward, out, inp, n, s);
}

void gelu_backward(void* dinp, const void* inp, const void* dout, std::size_t n, DType dt, cudaStream_t s) {
  ZT_DISPATCH_STORAGE(dt, launch_gelu_backward, dinp, inp, dout, n, s);
}

}  // namespace zt::models::cuda

namespace zt::models::ops::on_cuda {

namespace {
std::size_t count(int N, int OC) { return static_cast<std::size_t>(N) * static_cast<std::size_t>(OC); }
}  // namespace

void bias_gelu_forward(ComputeContext& ctx, BufferView out, BufferView pre, BufferView bias, int N, int OC) {
  CudaComputeContext& c = as_cuda(ctx);
  cuda::bias_forward(pre.data, bias.data, N, OC, OC, c.dtype(), c.handle());
  cuda::gelu_forward(out.data, pre.data, count(N, OC), c.dtype(), c.handle());
}

void gelu_bias_backward(ComputeContext& ctx, BufferView dpre, BufferView dbias, BufferView pre, BufferView dout, int N,
                        int OC) {
  CudaComputeContext& c = as_cuda(ctx);
  cuda::gelu_backward(dpre.data, pre.data, dout.data, count(N, OC), c.dtype(), c.handle());
  cuda::bias_backward(dbias.data, dpre.data, c.reduction_scratch(cuda::column_sum_scratch_floats(N, OC)), N, OC, OC,
                      c.dtype(), c.handle());
}

}  // namespace zt::models::ops::on_cuda
