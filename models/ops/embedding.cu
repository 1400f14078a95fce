// GPT-2's token + position embedding on the GPU (mirrors embedding.cpp).
#include "models/ops/embedding.h"

#include "models/cuda/cuda_context.h"
#include "models/cuda/storage.cuh"
#include "models/ops/token_embedding.h"

namespace zt::models::cuda {

namespace {

constexpr unsigned kThreads = 256;

// tokens (B, T) -> out (B, T, C): one thread per output element.
template <typename S>
__global__ void embedding_forward_kernel(S* out, const std::int32_t* tokens, const S* wte, const S* wpe, int T, int C,
                                         std::size_t n) {
  std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  int c = static_cast<int>(i % C);
  std::size_t bt = i / C;
  int t = static_cast<int>(bt % T);
  store(out + i, load(wte + static_cast<std::size_t>(tokens[bt]) * C + c) + load(wpe + static_cast<std::size_t>(t) * C + c));
}

// dwpe (T, C): one thread per (t, c), summing over b in order.
template <typename S>
__global__ void embedding_backward_wpe_kernel(S* dwpe, const S* dout, int B, int T, int C) {
  std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i >= static_cast<std::size_t>(T) * C) return;
  float acc = 0.0f;
  for (int b = 0; b < B; ++b) acc += load(dout + static_cast<std::size_t>(b) * T * C + i);
  store(dwpe + i, load(dwpe + i) + acc);
}

template <typename S>
void launch_embedding_forward(void* out, const std::int32_t* tokens, const void* wte, const void* wpe, int B, int T,
                              int C, cudaStream_t s) {
  std::size_t n = static_cast<std::size_t>(B) * T * C;
  embedding_forward_kernel<S><<<blocks_for(n, kThreads), kThreads, 0, s>>>(
      static_cast<S*>(out), tokens, static_cast<const S*>(wte), static_cast<const S*>(wpe), T, C, n);
}

template <typename S>
void launch_embedding_backward_wpe(void* dwpe, const void* dout, int B, int T, int C, cudaStream_t s) {
  std::size_t n = static_cast<std::size_t>(T) * C;
  embedding_backward_wpe_kernel<S><<<blocks_for(n, kThreads), kThreads, 0, s>>>(
      static_cast<S*>(dwpe), static_cast<const S*>(dout), B, T, C);
}

}  // namespace

void embedding_forward(void* out, const std::int32_t* tokens, const void* wte, const void* wpe, int B, int T, int C,
                       DType dt, cudaStream_t s) {
  ZT_DISPATCH_STORAGE(dt, launch_embedding_forward, out, tokens, wte, wpe, B, T, C, s);
}

void embedding_backward_wpe(void* dwpe, const void* dout, int B, int T, int C, DType dt, cudaStream_t s) {
  ZT_DISPATCH_STORAGE(dt, launch_embedding_backward_wpe, dwpe, dout, B, T, C, s);
}

}  // namespace zt::models::cuda

namespace zt::models::ops::on_cuda {

void embedding_forward(ComputeContext& ctx, BufferView out, BufferView tokens, BufferView wte, BufferView wpe, int B,
                       int T, int C) {
  CudaComputeContext& c = as_cuda(ctx);
  cuda::embedding_forward(out.data, int32_view(tokens), wte.data, wpe.data, B, T, C, c.dtype(), c.handle());
}

void embedding_backward(ComputeContext& ctx, BufferView dwte, BufferView dwpe, BufferView dout, BufferView tokens,
                        const TokenIndex& index, int B, int T, int C) {
  // wte's gradient is the token embedding's: one block per distinct token, its positions summed
  // in order (deterministic, no atomics).
  on_cuda::token_embedding_backward(ctx, dwte, dout, tokens, index, B * T, C);
  CudaComputeContext& c = as_cuda(ctx);
  cuda::embedding_backward_wpe(dwpe.data, dout.data, B, T, C, c.dtype(), c.handle());
}

}  // namespace zt::models::ops::on_cuda
