// Causal multi-head self-attention core (CPU, fp32, products through OpenBLAS): the fast kernels
// the model calls (row tiles that skip the masked half, softmax between the two products of a
// tile) and the simple full-square reference they are tested against (cpu::reference).
// The qkv and output projections are Linear layers around it.
#pragma once

#include <cstddef>

#include "models/ops/common.h"

namespace zt::models::cpu {

// qkv (B, T, 3C) as [q | k | v], head h using columns h*hs .. (h+1)*hs of each, hs = C / NH
//   -> out (B, T, C), att (B, NH, T, T) the softmax probabilities (saved for backward; zero above
//   the diagonal).
void attention_forward(float* out, float* att, const float* qkv, int B, int T, int C, int NH);
// dout (B, T, C) -> dqkv (B, T, 3C), overwritten. scratch holds T*T floats.
void attention_backward(float* dqkv, float* scratch, const float* dout, const float* qkv, const float* att, int B,
                        int T, int C, int NH);

namespace reference {
void attention_forward(float* out, float* att, const float* qkv, int B, int T, int C, int NH);
void attention_backward(float* dqkv, float* scratch, const float* dout, const float* qkv, const float* att, int B,
                        int T, int C, int NH);
}  // namespace reference

}  // namespace zt::models::cpu

namespace zt::models::ops {

// On a context's views of its compute dtype. Where a CUDA context takes the flash kernels
// (attention_takes_flash: 16-bit, hs 64, views 16-byte aligned as activations always are), att
// holds per-row softmax statistics (one float per (b, h, t)) rather than the (B, NH, T, T)
// probabilities, and backward also reads forward's output (for rowsum(dout * out)).
// att: attention_saved_numel() elements. scratch: attention_scratch_numel() elements (the CPU
// backward's T x T tile; on the GPU's materialised path the heads of q, k, v, their gradients and
// the score gradients; on the flash path backward's rowsum, one float per (b, h, t)).
bool attention_takes_flash(Device device, DType dtype, int B, int T, int C, int NH);
std::size_t attention_saved_numel(Device device, DType dtype, int B, int T, int C, int NH);
std::size_t attention_scratch_numel(Device device, DType dtype, int B, int T, int C, int NH);
void attention_forward(ComputeContext& ctx, BufferView out, BufferView att, BufferView qkv, BufferView scratch, int B,
                       int T, int C, int NH);
void attention_backward(ComputeContext& ctx, BufferView dqkv, BufferView dout, BufferView qkv, BufferView out,
                        BufferView att, BufferView scratch, int B, int T, int C, int NH);

// The op on a CUDA context (attention.cu; in a build without CUDA, the "built without CUDA" error of
// models/no_cuda.cpp).
namespace on_cuda {
void attention_forward(ComputeContext& ctx, BufferView out, BufferView att, BufferView qkv, BufferView scratch, int B,
                       int T, int C, int NH);
void attention_backward(ComputeContext& ctx, BufferView dqkv, BufferView dout, BufferView qkv, BufferView out,
                        BufferView att, BufferView scratch, int B, int T, int C, int NH);
}  // namespace on_cuda

}  // namespace zt::models::ops
