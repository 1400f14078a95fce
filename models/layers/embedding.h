// Token + position embedding (CPU reference, fp32).
#pragma once

#include <cstdint>

namespace zt::models::cpu {

// out[b,t,:] = wte[tokens[b,t],:] + wpe[t,:]
// tokens (B, T), wte (V, C), wpe (maxT, C) -> out (B, T, C)
void embedding_forward(float* out, const std::int32_t* tokens, const float* wte, const float* wpe, int B, int T, int C);
// Accumulates: dwte[tokens[b,t],:] += dout[b,t,:], dwpe[t,:] += dout[b,t,:].
// dout (B, T, C) -> dwte (V, C), dwpe (maxT, C)
void embedding_backward(float* dwte, float* dwpe, const float* dout, const std::int32_t* tokens, int B, int T, int C);

}  // namespace zt::models::cpu
