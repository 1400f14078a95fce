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

// On a context's views. scratch: attention_scratch_numel() elements of the compute dtype (the CPU
// backward's T x T tile; on the GPU the heads of q, k, v, their gradients and the score gradients).
// Backward also reads forward's output: the GPU's flash path (16-bit, hs 64) needs rowsum(dout *
// out), and there att holds per-row softmax statistics (fp32, in its first B*NH*T*4 bytes) rather
// than the probabilities.
std::size_t attention_scratch_numel(Device device, int B, int T, int C, int NH);
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
