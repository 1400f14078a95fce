// LayerNorm over the last dimension (CPU, fp32), eps = 1e-5 as GPT-2: the fast kernels the model
// calls, and the simple reference (double accumulation) they are tested against (cpu::reference).
#pragma once

#include "models/ops/common.h"

namespace zt::models::cpu {

inline constexpr float kLayerNormEps = 1e-5f;

// out = (inp - mean) * rstd * weight + bias, saving mean and rstd (1 / sqrt(var + eps)) per row.
// inp (N, C), weight (C), bias (C) -> out (N, C), mean (N), rstd (N)
void layernorm_forward(float* out, float* mean, float* rstd, const float* inp, const float* weight, const float* bias,
                       int N, int C);
// The residual add and the LayerNorm after it in one sweep over the rows: mid = a + b, then
// out = layernorm(mid) as above while the row of mid is still in cache, so mid is not read back from
// memory. a (N, C), b (N, C) -> mid (N, C), out (N, C), mean (N), rstd (N); mid may alias a or b.
void residual_layernorm_forward(float* mid, float* out, float* mean, float* rstd, const float* a, const float* b,
                                const float* weight, const float* bias, int N, int C);
// Accumulates into dinp, dweight and dbias (+=): the residual stream adds its own gradient first.
// dout (N, C) -> dinp (N, C), dweight (C), dbias (C)
void layernorm_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                        const float* weight, const float* mean, const float* rstd, int N, int C);

namespace reference {
void layernorm_forward(float* out, float* mean, float* rstd, const float* inp, const float* weight, const float* bias,
                       int N, int C);
void layernorm_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                        const float* weight, const float* mean, const float* rstd, int N, int C);
}  // namespace reference

}  // namespace zt::models::cpu

namespace zt::models::ops {

// On a context's views: mean, rstd f32 (N), the rest in the compute dtype; rules as above.
void layernorm_forward(ComputeContext& ctx, BufferView out, BufferView mean, BufferView rstd, BufferView inp,
                       BufferView weight, BufferView bias, int N, int C);
void layernorm_backward(ComputeContext& ctx, BufferView dinp, BufferView dweight, BufferView dbias, BufferView dout,
                        BufferView inp, BufferView weight, BufferView mean, BufferView rstd, int N, int C);
// mid = a + b (may alias a or b), then layernorm_forward(out, mean, rstd, mid, ...): one sweep on
// the CPU, the residual and the LayerNorm kernels on the GPU.
void residual_layernorm_forward(ComputeContext& ctx, BufferView mid, BufferView out, BufferView mean, BufferView rstd,
                                BufferView a, BufferView b, BufferView weight, BufferView bias, int N, int C);

// The op on a CUDA context (layernorm.cu; in a build without CUDA, the "built without CUDA" error of
// models/no_cuda.cpp).
namespace on_cuda {
void layernorm_forward(ComputeContext& ctx, BufferView out, BufferView mean, BufferView rstd, BufferView inp,
                       BufferView weight, BufferView bias, int N, int C);
void layernorm_backward(ComputeContext& ctx, BufferView dinp, BufferView dweight, BufferView dbias, BufferView dout,
                        BufferView inp, BufferView weight, BufferView mean, BufferView rstd, int N, int C);
void residual_layernorm_forward(ComputeContext& ctx, BufferView mid, BufferView out, BufferView mean, BufferView rstd,
                                BufferView a, BufferView b, BufferView weight, BufferView bias, int N, int C);
}  // namespace on_cuda

}  // namespace zt::models::ops
