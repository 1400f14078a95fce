// Token embedding without learned positions (CPU reference, fp32): Llama's embed_tokens.
#pragma once

#include <cstdint>

#include "models/ops/common.h"

namespace zt::models::cpu {

// tokens (N), wte (V, C) -> out (N, C) = wte[tokens[n], :]
void token_embedding_forward(float* out, const std::int32_t* tokens, const float* wte, int N, int C);
// dout (N, C) -> dwte[tokens[n], :] += dout[n, :]
void token_embedding_backward(float* dwte, const float* dout, const std::int32_t* tokens, int N, int C);

}  // namespace zt::models::cpu

namespace zt::models::ops {

// tokens int32 (N), wte (V, C) -> out (N, C);  backward: dwte += (index groups the positions, GPU only).
void token_embedding_forward(ComputeContext& ctx, BufferView out, BufferView tokens, BufferView wte, int N, int C);
void token_embedding_backward(ComputeContext& ctx, BufferView dwte, BufferView dout, BufferView tokens,
                              const TokenIndex& index, int N, int C);

// The op on a CUDA context (token_embedding.cu; in a build without CUDA, the "built without CUDA" error of
// models/no_cuda.cpp).
namespace on_cuda {
void token_embedding_forward(ComputeContext& ctx, BufferView out, BufferView tokens, BufferView wte, int N, int C);
void token_embedding_backward(ComputeContext& ctx, BufferView dwte, BufferView dout, BufferView tokens,
                              const TokenIndex& index, int N, int C);
}  // namespace on_cuda

}  // namespace zt::models::ops
