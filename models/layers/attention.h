// Causal multi-head self-attention core (CPU, fp32, products through OpenBLAS): the fast kernels
// the model calls (row tiles that skip the masked half, softmax between the two products of a
// tile) and the simple full-square reference they are tested against (cpu::reference).
// The qkv and output projections are Linear layers around it.
#pragma once

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
