// SwiGLU, the gated MLP activation of Llama (CPU reference, fp32): the up projection produces
// [gate | up] side by side in one row (gate_proj and up_proj are adjacent in the parameter, so
// one product computes both), and out = silu(gate) * up with silu(x) = x * sigmoid(x).
#pragma once

namespace zt::models::cpu {

// gu (N, 2I) = [gate | up] -> out (N, I)
void swiglu_forward(float* out, const float* gu, int N, int I);
// dout (N, I) -> dgu (N, 2I), overwritten: d gate = dout * up * silu'(gate), d up = dout * silu(gate).
void swiglu_backward(float* dgu, const float* dout, const float* gu, int N, int I);

}  // namespace zt::models::cpu
