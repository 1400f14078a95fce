// SwiGLU, the gated MLP activation of Llama (CPU reference, fp32): the up projection produces
// [gate | up] side by side in one row (gate_proj and up_proj are adjacent in the parameter, so
// one product computes both), and out = silu(gate) * up with silu(x) = x * sigmoid(x).
#pragma once

#include "models/ops/common.h"

namespace zt::models::cpu {

// gu (N, 2I) = [gate | up] -> out (N, I)
void swiglu_forward(float* out, const float* gu, int N, int I);
// dout (N, I) -> dgu (N, 2I), overwritten: d gate = dout * up * silu'(gate), d up = dout * silu(gate).
void swiglu_backward(float* dgu, const float* dout, const float* gu, int N, int I);

}  // namespace zt::models::cpu

namespace zt::models::ops {

// On a context's views: gu (N, 2I) = [gate | up] -> out (N, I);  backward overwrites dgu (N, 2I).
void swiglu_forward(ComputeContext& ctx, BufferView out, BufferView gu, int N, int I);
void swiglu_backward(ComputeContext& ctx, BufferView dgu, BufferView dout, BufferView gu, int N, int I);

// The op on a CUDA context (swiglu.cu; in a build without CUDA, the "built without CUDA" error of
// models/no_cuda.cpp).
namespace on_cuda {
void swiglu_forward(ComputeContext& ctx, BufferView out, BufferView gu, int N, int I);
void swiglu_backward(ComputeContext& ctx, BufferView dgu, BufferView dout, BufferView gu, int N, int I);
}  // namespace on_cuda

}  // namespace zt::models::ops
