// Token + position embedding (CPU reference, fp32).
#pragma once

#include <cstdint>

#include "models/ops/common.h"

namespace zt::models::cpu {

// out[b,t,:] = wte[tokens[b,t],:] + wpe[t,:]
// tokens (B, T), wte (V, C), wpe (maxT, C) -> out (B, T, C)
void embedding_forward(float* out, const std::int32_t* tokens, const float* wte, const float* wpe, int B, int T, int C);
// Accumulates: dwte[tokens[b,t],:] += dout[b,t,:], dwpe[t,:] += dout[b,t,:].
// dout (B, T, C) -> dwte (V, C), dwpe (maxT, C)
void embedding_backward(float* dwte, float* dwpe, const float* dout, const std::int32_t* tokens, int B, int T, int C);

}  // namespace zt::models::cpu

namespace zt::models::ops {

// GPT-2's token + position embedding on a context's views: tokens int32 (B*T); out, wte, wpe in
// the compute dtype. The backward accumulates; index groups the positions by token (GPU only).
void embedding_forward(ComputeContext& ctx, BufferView out, BufferView tokens, BufferView wte, BufferView wpe, int B,
                       int T, int C);
void embedding_backward(ComputeContext& ctx, BufferView dwte, BufferView dwpe, BufferView dout, BufferView tokens,
                        const TokenIndex& index, int B, int T, int C);

// The op on a CUDA context (embedding.cu; in a build without CUDA, the "built without CUDA" error of
// models/no_cuda.cpp).
namespace on_cuda {
void embedding_forward(ComputeContext& ctx, BufferView out, BufferView tokens, BufferView wte, BufferView wpe, int B,
                       int T, int C);
void embedding_backward(ComputeContext& ctx, BufferView dwte, BufferView dwpe, BufferView dout, BufferView tokens,
                        const TokenIndex& index, int B, int T, int C);
}  // namespace on_cuda

}  // namespace zt::models::ops
