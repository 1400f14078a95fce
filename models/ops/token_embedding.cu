// The Llama family's token embedding on the GPU (mirrors token_embedding.cpp).
#include "models/ops/token_embedding.h"

#include "models/cuda/cuda_context.h"
#include "models/cuda/storage.cuh"

namespace zt::models::cuda {

namespace {

constexpr unsigned kThreads = 256;

// tokens (N) -> out (N, C): one thread per output element.
template <typename S>
__global__ void token_embedding_forward_kernel(S* out, const std::int32_t* tokens, const S* wte, int C, std::size_t n) {
  std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  out[i] = wte[static_cast<std::size_t>(tokens[i / C]) * C + i % C];
}

// dwte: one block per distinct token, threads over channels, summing that token's positions in
// ascending order (the host-built TokenIndex): deterministic without atomics.
template <typename S>
__global__ void token_embedding_backward_kernel(S* dwte, const S* dout, const std::int32_t* positions,
                                                const std::int32_t* starts, const std::int32_t* group_tokens, int C) {
  int g = blockIdx.x;
  std::size_t row = static_cast<std::size_t>(group_tokens[g]) * C;
  for (int c = threadIdx.x; c < C; c += blockDim.x) {
    float acc = 0.0f;
    for (int k = starts[g]; k < starts[g + 1]; ++k) acc += load(dout + static_cast<std::size_t>(positions[k]) * C + c);
    store(dwte + row + c, load(dwte + row + c) + acc);
  }
}

template <typename S>
void launch_token_embedding_forward(void* out, const std::int32_t* tokens, const void* wte, int N, int C,
                                    cudaStream_t s) {
  std::size_t n = static_cast<std::size_t>(N) * C;
  token_embedding_forward_kernel<S><<<blocks_for(n, kThreads), kThreads, 0, s>>>(
      static_cast<S*>(out), tokens, static_cast<const S*>(wte), C, n);
}

template <typename S>
void launch_token_embedding_backward(void* dwte, const void* dout, const std::int32_t* positions,
                                     const std::int32_t* starts, const std::int32_t* group_tokens, int groups, int C,
                                     cudaStream_t s) {
  if (groups > 0)
    token_embedding_backward_kernel<S><<<groups, kThreads, 0, s>>>(static_cast<S*>(dwte), static_cast<const S*>(dout),
                                                                   positions, starts, group_tokens, C);
}

}  // namespace

void token_embedding_forward(void* out, const std::int32_t* tokens, const void* wte, int N, int C, DType dt,
                             cudaStream_t s) {
  ZT_DISPATCH_STORAGE(dt, launch_token_embedding_forward, out, tokens, wte, N, C, s);
}

void token_embedding_backward(void* dwte, const void* dout, const std::int32_t* positions, const std::int32_t* starts,
                              const std::int32_t* group_tokens, int groups, int C, DType dt, cudaStream_t s) {
  ZT_DISPATCH_STORAGE(dt, launch_token_embedding_backward, dwte, dout, positions, starts, group_tokens, groups, C, s);
}

}  // namespace zt::models::cuda

namespace zt::models::ops::on_cuda {

void token_embedding_forward(ComputeContext& ctx, BufferView out, BufferView tokens, BufferView wte, int N, int C) {
  CudaComputeContext& c = as_cuda(ctx);
  cuda::token_embedding_forward(out.data, int32_view(tokens), wte.data, N, C, c.dtype(), c.handle());
}

void token_embedding_backward(ComputeContext& ctx, BufferView dwte, BufferView dout, BufferView,
                              const TokenIndex& index, int, int C) {
  CudaComputeContext& c = as_cuda(ctx);
  cuda::token_embedding_backward(dwte.data, dout.data, int32_view(index.positions), int32_view(index.starts),
                                 int32_view(index.tokens), index.groups, C, c.dtype(), c.handle());
}

}  // namespace zt::models::ops::on_cuda
