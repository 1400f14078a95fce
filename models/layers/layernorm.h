// LayerNorm over the last dimension (CPU, fp32), eps = 1e-5 as GPT-2: the fast kernels the model
// calls, and the simple reference (double accumulation) they are tested against (cpu::reference).
#pragma once

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
