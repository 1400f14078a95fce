// GELU (tanh) after a bias on the GPU (mirrors gelu.cpp): bias and GELU in one sweep of eight
// elements a thread where rows allow it (the shared bias kernel then GELU otherwise); backward's
// GELU likewise, then the shared column sums for the bias.
#include "models/ops/gelu.h"

#include "models/cuda/cuda_context.h"
#include "models/cuda/gemm.h"
#include "models/cuda/shared_kernels.h"
#include "models/ops/linear.h"
#include "models/cuda/storage.cuh"

namespace zt::models::cuda {

namespace {

constexpr unsigned kThreads = 256;

constexpr float kSqrt2OverPi = 0.7978845608028654f;
constexpr float kCubic = 0.044715f;

__device__ __forceinline__ float gelu(float x) {
  return 0.5f * x * (1.0f + tanhf(kSqrt2OverPi * (x + kCubic * x * x * x)));
}
__device__ __forceinline__ float gelu_grad(float x) {
  float th = tanhf(kSqrt2OverPi * (x + kCubic * x * x * x));
  float du = kSqrt2OverPi * (1.0f + 3.0f * kCubic * x * x);
  return 0.5f * (1.0f + th) + 0.5f * x * (1.0f - th * th) * du;
}

// pre (N, OC) += bias, stored; out = gelu(pre as stored). Eight columns a thread.
template <typename S>
__global__ void bias_gelu_vec8_kernel(S* out, S* pre, const S* bias, int N, int OC) {
  const int c = (blockIdx.x * blockDim.x + threadIdx.x) * 8;
  if (c >= OC) return;
  float b[8], v[8];
  load8(bias + c, b);
  for (int row = blockIdx.y; row < N; row += gridDim.y) {
    const std::size_t i = static_cast<std::size_t>(row) * OC + c;
    load8(pre + i, v);
#pragma unroll
    for (int k = 0; k < 8; ++k) v[k] = rounded<S>(v[k] + b[k]);
    store8(pre + i, v);
#pragma unroll
    for (int k = 0; k < 8; ++k) v[k] = gelu(v[k]);
    store8(out + i, v);
  }
}

template <typename S>
__global__ void gelu_backward_vec8_kernel(S* dinp, const S* inp, const S* dout, std::size_t n8) {
  std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i >= n8) return;
  float x[8], d[8];
  load8(inp + 8 * i, x);
  load8(dout + 8 * i, d);
#pragma unroll
  for (int k = 0; k < 8; ++k) d[k] *= gelu_grad(x[k]);
  store8(dinp + 8 * i, d);
}

template <typename S>
__global__ void gelu_forward_kernel(S* out, const S* inp, std::size_t n) {
  std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  store(out + i, gelu(load(inp + i)));
}

template <typename S>
__global__ void gelu_backward_kernel(S* dinp, const S* inp, const S* dout, std::size_t n) {
  std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  store(dinp + i, load(dout + i) * gelu_grad(load(inp + i)));
}

template <typename S> void launch_gelu_forward(void* out, const void* inp, std::size_t n, cudaStream_t s) {
  gelu_forward_kernel<S><<<blocks_for(n, kThreads), kThreads, 0, s>>>(static_cast<S*>(out), static_cast<const S*>(inp), n);
}
template <typename S>
void launch_bias_gelu_vec8(void* out, void* pre, const void* bias, int N, int OC, cudaStream_t s) {
  const unsigned threads = std::min(kThreads, static_cast<unsigned>((OC / 8 + 31) / 32 * 32));
  const dim3 grid(blocks_for(static_cast<std::size_t>(OC / 8), threads), chunk_grid_y(std::min(N, 2048)));
  bias_gelu_vec8_kernel<S><<<grid, threads, 0, s>>>(static_cast<S*>(out), static_cast<S*>(pre),
                                                    static_cast<const S*>(bias), N, OC);
}
template <typename S>
void launch_gelu_backward(void* dinp, const void* inp, const void* dout, std::size_t n, cudaStream_t s) {
  if (vectorizable(n, {dinp, inp, dout})) {
    gelu_backward_vec8_kernel<S><<<blocks_for(n / 8, kThreads), kThreads, 0, s>>>(
        static_cast<S*>(dinp), static_cast<const S*>(inp), static_cast<const S*>(dout), n / 8);
    return;
  }
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

// pre += bias, out = gelu(pre): one sweep where the rows allow eight-element accesses.
void bias_gelu_forward(void* out, void* pre, const void* bias, int N, int OC, DType dt, cudaStream_t s) {
  if (N <= 0 || OC <= 0) return;  // an empty tensor (and no zero-thread launch)
  if (vectorizable(OC, {out, pre, bias})) {
    ZT_DISPATCH_STORAGE(dt, launch_bias_gelu_vec8, out, pre, bias, N, OC, s);
    return;
  }
  bias_forward(pre, bias, N, OC, OC, dt, s);
  gelu_forward(out, pre, static_cast<std::size_t>(N) * OC, dt, s);
}

}  // namespace zt::models::cuda

namespace zt::models::ops::on_cuda {

namespace {
std::size_t count(int N, int OC) { return static_cast<std::size_t>(N) * static_cast<std::size_t>(OC); }
}  // namespace

void bias_gelu_forward(ComputeContext& ctx, BufferView out, BufferView pre, BufferView bias, int N, int OC) {
  CudaComputeContext& c = as_cuda(ctx);
  cuda::bias_gelu_forward(out.data, pre.data, bias.data, N, OC, c.dtype(), c.handle());
}

void gelu_bias_backward(ComputeContext& ctx, BufferView dpre, BufferView dbias, BufferView pre, BufferView dout, int N,
                        int OC) {
  CudaComputeContext& c = as_cuda(ctx);
  cuda::gelu_backward(dpre.data, pre.data, dout.data, count(N, OC), c.dtype(), c.handle());
  cuda::bias_backward(dbias.data, dpre.data, c.reduction_scratch(cuda::column_sum_scratch_floats(N, OC)), N, OC, OC,
                      c.dtype(), c.handle());
}

void linear_gelu_forward(ComputeContext& ctx, BufferView out, BufferView pre, BufferView inp, BufferView weight,
                         BufferView bias, int N, int IC, int OC) {
  CudaComputeContext& c = as_cuda(ctx);
  cuda::GemmArgs g;  // out (N, OC) = gelu(inp (N, IC) weight^T + bias), pre kept
  g.trans_b = true;
  g.M = N, g.N = OC, g.K = IC;
  g.A = inp.data, g.lda = IC, g.B = weight.data, g.ldb = IC, g.C = out.data, g.ldc = OC;
  if (cuda::gemm_with_epilogue(c, g, {cuda::GemmEpilogue::Kind::gelu_bias, bias.data, pre.data, OC})) return;
  linear_forward(ctx, pre, inp, weight, {}, N, IC, OC, OC);
  bias_gelu_forward(ctx, out, pre, bias, N, OC);
}

void linear_backward_into_gelu(ComputeContext& ctx, BufferView dpre, BufferView dbias, BufferView dweight2,
                               BufferView dbias2, BufferView dout, BufferView gelu_out, BufferView weight2,
                               BufferView pre, int N, int OC, int OC2) {
  CudaComputeContext& c = as_cuda(ctx);
  cuda::GemmArgs g;  // dpre (N, OC) = dout (N, OC2) weight2 (OC2, OC) * gelu'(pre)
  g.M = N, g.N = OC, g.K = OC2;
  g.A = dout.data, g.lda = OC2, g.B = weight2.data, g.ldb = OC, g.C = dpre.data, g.ldc = OC;
  if (cuda::gemm_with_epilogue(c, g, {cuda::GemmEpilogue::Kind::dgelu, nullptr, pre.data, OC})) {
    linear_backward(ctx, {}, dweight2, dbias2, dout, gelu_out, weight2, N, OC, OC2, OC2);
    cuda::bias_backward(dbias.data, dpre.data, c.reduction_scratch(cuda::column_sum_scratch_floats(N, OC)), N, OC, OC,
                        c.dtype(), c.handle());
    return;
  }
  linear_backward(ctx, dpre, dweight2, dbias2, dout, gelu_out, weight2, N, OC, OC2, OC2);
  gelu_bias_backward(ctx, dpre, dbias, pre, dpre, N, OC);
}

}  // namespace zt::models::ops::on_cuda
