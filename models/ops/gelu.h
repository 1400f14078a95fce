// GELU, tanh approximation as in GPT-2 (CPU, fp32), fused with the bias of the linear layer before
// it: the fast kernels the model calls, and the simple element-wise reference they are tested
// against (cpu::reference). Fused, the bias add and GELU (and, backward, GELU' and the bias
// gradient) take one sweep over the (N, OC) pre-activation instead of two.
#pragma once

#include <cstddef>

#include "models/ops/common.h"

namespace zt::models::cpu {

// gelu(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
// pre (N, OC) holds x W^T without its bias: pre += bias (OC) in place (the pre-activation the
// backward reads), out (N, OC) = gelu(pre).
void bias_gelu_forward(float* out, float* pre, const float* bias, int N, int OC);
// dpre (N, OC) = dout * gelu'(pre), overwritten (dpre may alias dout); dbias (OC) += the column
// sums of dpre, rows in order (the same sums as linear_backward's dbias).
void gelu_bias_backward(float* dpre, float* dbias, const float* pre, const float* dout, int N, int OC);


namespace reference {
void gelu_forward(float* out, const float* inp, std::size_t n);
void gelu_backward(float* dinp, const float* inp, const float* dout, std::size_t n);
}  // namespace reference

}  // namespace zt::models::cpu

namespace zt::models::ops {

// On a context's views, after a linear layer computed without its bias (linear_forward with an
// empty bias view): rules as above. On the GPU, the bias and GELU kernels one after the other.
void bias_gelu_forward(ComputeContext& ctx, BufferView out, BufferView pre, BufferView bias, int N, int OC);
void gelu_bias_backward(ComputeContext& ctx, BufferView dpre, BufferView dbias, BufferView pre, BufferView dout, int N,
                        int OC);

// A linear layer and the GELU after it as one op: pre (N, OC) = inp (N, IC) weight^T + bias,
// out = gelu(pre). The values of linear_forward without the bias, then bias_gelu_forward; on the
// GPU one product with cuBLASLt's GELU epilogue where it applies (models/cuda/gemm.h).
void linear_gelu_forward(ComputeContext& ctx, BufferView out, BufferView pre, BufferView inp, BufferView weight,
                         BufferView bias, int N, int IC, int OC);
// The backward of a linear layer (weight2 (OC2, OC), bias2) whose input was gelu(pre), through the
// GELU: dweight2 and dbias2 accumulated as linear_backward does; dpre (N, OC) = (dout weight2) *
// gelu'(pre), overwritten; dbias (OC) += the column sums of dpre. The values of linear_backward,
// then gelu_bias_backward in place; on the GPU, GELU's backward fused into dpre's product as
// cuBLASLt's dGELU epilogue where it applies.
void linear_backward_into_gelu(ComputeContext& ctx, BufferView dpre, BufferView dbias, BufferView dweight2,
                               BufferView dbias2, BufferView dout, BufferView gelu_out, BufferView weight2,
                               BufferView pre, int N, int OC, int OC2);

// The op on a CUDA context (gelu.cu; in a build without CUDA, the "built without CUDA" error of
// models/no_cuda.cpp).
namespace on_cuda {
void bias_gelu_forward(ComputeContext& ctx, BufferView out, BufferView pre, BufferView bias, int N, int OC);
void gelu_bias_backward(ComputeContext& ctx, BufferView dpre, BufferView dbias, BufferView pre, BufferView dout, int N,
                        int OC);
void linear_gelu_forward(ComputeContext& ctx, BufferView out, BufferView pre, BufferView inp, BufferView weight,
                         BufferView bias, int N, int IC, int OC);
void linear_backward_into_gelu(ComputeContext& ctx, BufferView dpre, BufferView dbias, BufferView dweight2,
                               BufferView dbias2, BufferView dout, BufferView gelu_out, BufferView weight2,
                               BufferView pre, int N, int OC, int OC2);
}  // namespace on_cuda

}  // namespace zt::models::ops
